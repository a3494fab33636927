-- Project dashboards with their widgets, and the status id on status-change activity
-- rows (cycle-time reports resolve status categories by id,
-- docs/api-conventions.md#reports).

-- One dashboard per project, created on its first read; the unique constraint makes
-- concurrent first reads agree on one row (INSERT ... ON CONFLICT DO NOTHING).
CREATE TABLE dashboards (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT dashboards_project_key UNIQUE (project_id)
);

CREATE TABLE dashboard_widgets (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    dashboard_id uuid NOT NULL REFERENCES dashboards (id) ON DELETE CASCADE,
    type         text NOT NULL CHECK (type IN ('BURNDOWN', 'VELOCITY', 'CYCLE_TIME', 'ISSUE_COUNT',
                     'ISSUES_BY_STATUS', 'ISSUE_LIST')),
    -- Free-form text (JSON by convention) whose meaning the client defines per type.
    config       text,
    grid_x       integer NOT NULL DEFAULT 0 CHECK (grid_x >= 0),
    grid_y       integer NOT NULL DEFAULT 0 CHECK (grid_y >= 0),
    grid_w       integer NOT NULL DEFAULT 4 CHECK (grid_w >= 1),
    grid_h       integer NOT NULL DEFAULT 4 CHECK (grid_h >= 1),
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX dashboard_widgets_dashboard ON dashboard_widgets (dashboard_id, created_at);

-- The status a STATUS_CHANGED row moved the issue to. new_value keeps the display name;
-- the id survives renames and tells apart two statuses of the same name. No foreign
-- key: history outlives a deleted status (reports then fall back to the name). Rows
-- written before this column existed are NULL and resolved by name as well.
ALTER TABLE issue_activities ADD COLUMN new_status_id uuid;
