-- Tasks (docs/tasks.md): long work (bulk changes, exports, imports) run as River jobs,
-- with a row its creator reads for progress. The row is also the work's cursor: every
-- batch commits its items and the advanced cursor in one transaction, so a worker that
-- dies mid-task loses nothing and a resumed task never applies an item twice.
CREATE TABLE tasks (
    id               uuid         PRIMARY KEY,
    kind             varchar(32)  NOT NULL,
    state            varchar(16)  NOT NULL DEFAULT 'QUEUED'
        CHECK (state IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED')),
    created_by       uuid         NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    project_id       uuid         REFERENCES projects (id) ON DELETE CASCADE,
    project_key      varchar(10),
    -- What the task was asked to do (kind-specific, validated at the edge).
    params           jsonb        NOT NULL DEFAULT '{}',
    -- The items the task works through, fixed when it was queued or on its first batch.
    items            jsonb        NOT NULL DEFAULT '[]',
    -- How many items have been worked through (applied, failed or skipped), committed
    -- with them; the next batch starts here.
    cursor           integer      NOT NULL DEFAULT 0,
    -- Kind-specific state carried between batches (an import's key map, an export's
    -- file offsets), committed with the cursor.
    state_data       jsonb        NOT NULL DEFAULT '{}',
    total            integer      NOT NULL DEFAULT 0,
    done             integer      NOT NULL DEFAULT 0,
    failed           integer      NOT NULL DEFAULT 0,
    -- The first 100 item errors; failed counts them all.
    errors           jsonb        NOT NULL DEFAULT '[]',
    result_key       text,
    result_name      text,
    result_type      text,
    cancel_requested boolean      NOT NULL DEFAULT false,
    -- When progress was last pushed over STOMP (at most a few pushes a second).
    pushed_at        timestamptz,
    created_at       timestamptz  NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz
);

CREATE INDEX tasks_created_by ON tasks (created_by, created_at DESC, id DESC);
CREATE INDEX tasks_finished ON tasks (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX tasks_project ON tasks (project_id);

-- What a task created, so an import can be undone (POST /tasks/{id}/undo): one row per
-- created issue, label, version, sprint or custom field, written in the batch that
-- created it.
CREATE TABLE task_created (
    task_id    uuid        NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    kind       varchar(16) NOT NULL,
    id         uuid        NOT NULL,
    PRIMARY KEY (task_id, kind, id)
);

-- A task's result (an export's zip or CSV), in chunks of up to 1 MiB written in order:
-- in Postgres, like everything else, so any API replica streams it one chunk at a time.
CREATE TABLE task_results (
    task_id uuid    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq     integer NOT NULL,
    data    bytea   NOT NULL,
    PRIMARY KEY (task_id, seq)
);
