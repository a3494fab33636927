-- Projects, members, organizations, workflows, labels, versions, sprints and issues.

ALTER TABLE projects ADD COLUMN workflow_id uuid;
-- The last issue number handed out; incremented under the project row's lock, so keys
-- have no gaps and no duplicates (a rolled-back create gives its number back).
ALTER TABLE projects ADD COLUMN issue_seq integer NOT NULL DEFAULT 0;
CREATE INDEX projects_owner ON projects (owner_id);
CREATE INDEX projects_org ON projects (org_id);

CREATE TABLE project_members (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text NOT NULL DEFAULT 'MEMBER' CHECK (role IN ('ADMIN', 'MEMBER', 'VIEWER')),
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT project_members_project_user_key UNIQUE (project_id, user_id)
);
CREATE INDEX project_members_user ON project_members (user_id);

CREATE TABLE organization_members (
    org_id     uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text NOT NULL DEFAULT 'MEMBER' CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX organization_members_user ON organization_members (user_id);

CREATE TABLE workflows (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       varchar(255) NOT NULL CHECK (btrim(name) <> ''),
    project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    is_default boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workflows_project ON workflows (project_id);
ALTER TABLE projects ADD CONSTRAINT projects_workflow_fk FOREIGN KEY (workflow_id) REFERENCES workflows (id) ON DELETE SET NULL;

CREATE TABLE workflow_statuses (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workflow_id uuid NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    name        varchar(100) NOT NULL CHECK (btrim(name) <> ''),
    category    text NOT NULL CHECK (category IN ('TODO', 'IN_PROGRESS', 'DONE')),
    color       char(7) NOT NULL DEFAULT '#6c8fef' CHECK (color ~ '^#[0-9a-fA-F]{6}$'),
    position    integer NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workflow_statuses_workflow ON workflow_statuses (workflow_id, position);

CREATE TABLE workflow_transitions (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workflow_id    uuid NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    from_status_id uuid REFERENCES workflow_statuses (id) ON DELETE CASCADE,
    to_status_id   uuid NOT NULL REFERENCES workflow_statuses (id) ON DELETE CASCADE,
    guards         jsonb,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workflow_transitions_workflow ON workflow_transitions (workflow_id, to_status_id);

CREATE TABLE workflow_status_positions (
    workflow_id uuid NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    status_id   uuid NOT NULL REFERENCES workflow_statuses (id) ON DELETE CASCADE,
    x           integer NOT NULL DEFAULT 0,
    y           integer NOT NULL DEFAULT 0,
    PRIMARY KEY (workflow_id, status_id)
);

CREATE TABLE labels (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name       varchar(50) NOT NULL CHECK (btrim(name) <> ''),
    color      char(7) NOT NULL CHECK (color ~ '^#[0-9a-fA-F]{6}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT labels_project_name_key UNIQUE (project_id, name)
);

CREATE TABLE versions (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name       varchar(50) NOT NULL CHECK (btrim(name) <> ''),
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT versions_project_name_key UNIQUE (project_id, name)
);

CREATE TABLE sprints (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id       uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name             varchar(255) NOT NULL CHECK (btrim(name) <> ''),
    goal             text,
    status           text NOT NULL DEFAULT 'PLANNED' CHECK (status IN ('PLANNED', 'ACTIVE', 'CLOSED')),
    start_date       date,
    end_date         date,
    planned_points   integer,
    completed_points integer,
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX sprints_project ON sprints (project_id, created_at);
-- At most one ACTIVE sprint per project, whatever the concurrency.
CREATE UNIQUE INDEX sprints_one_active ON sprints (project_id) WHERE status = 'ACTIVE';

CREATE TABLE issues (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id     uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    number         integer NOT NULL CHECK (number > 0),
    key            varchar(32) NOT NULL CONSTRAINT issues_key_key UNIQUE,
    title          varchar(255) NOT NULL CHECK (btrim(title) <> ''),
    description    text,
    type           text NOT NULL DEFAULT 'TASK' CHECK (type IN ('EPIC', 'STORY', 'BUG', 'TASK', 'SUBTASK')),
    priority       text NOT NULL DEFAULT 'MEDIUM' CHECK (priority IN ('CRITICAL', 'HIGH', 'MEDIUM', 'LOW')),
    story_points   integer CHECK (story_points BETWEEN 0 AND 1000),
    status_id      uuid NOT NULL CONSTRAINT issues_status_fk REFERENCES workflow_statuses (id) ON DELETE RESTRICT,
    assignee_id    uuid REFERENCES users (id),
    reporter_id    uuid NOT NULL REFERENCES users (id),
    parent_id      uuid REFERENCES issues (id) ON DELETE SET NULL,
    due_date       date,
    sprint_id      uuid REFERENCES sprints (id) ON DELETE SET NULL,
    sla_start_time timestamptz,
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT issues_project_number_key UNIQUE (project_id, number)
);
CREATE INDEX issues_project_status ON issues (project_id, status_id);
CREATE INDEX issues_project_assignee ON issues (project_id, assignee_id);
CREATE INDEX issues_project_sprint ON issues (project_id, sprint_id);
CREATE INDEX issues_project_updated ON issues (project_id, updated_at DESC);
CREATE INDEX issues_project_due ON issues (project_id, due_date) WHERE due_date IS NOT NULL;
CREATE INDEX issues_parent ON issues (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX issues_sla ON issues (sla_start_time) WHERE sla_start_time IS NOT NULL;

CREATE TABLE issue_labels (
    issue_id uuid NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    label_id uuid NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
    PRIMARY KEY (issue_id, label_id)
);
CREATE INDEX issue_labels_label ON issue_labels (label_id);

CREATE TABLE issue_versions (
    issue_id   uuid NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    version_id uuid NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
    type       text NOT NULL CHECK (type IN ('FIX', 'AFFECTS')),
    PRIMARY KEY (issue_id, version_id, type)
);
CREATE INDEX issue_versions_version ON issue_versions (version_id, type);

CREATE TABLE issue_activities (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    issue_id   uuid NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    actor_id   uuid NOT NULL REFERENCES users (id),
    type       text NOT NULL CHECK (type IN ('COMMENT', 'STATUS_CHANGED', 'ASSIGNED', 'UNASSIGNED', 'PRIORITY_CHANGED',
                   'TITLE_CHANGED', 'DESCRIPTION_CHANGED', 'STORY_POINTS_CHANGED', 'DUE_DATE_CHANGED', 'SPRINT_CHANGED',
                   'ATTACHMENT_ADDED', 'ATTACHMENT_REMOVED')),
    comment_id uuid,
    old_value  text,
    new_value  text,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX issue_activities_issue ON issue_activities (issue_id, created_at DESC, id DESC);
