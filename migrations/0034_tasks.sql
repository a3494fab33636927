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

-- A task's files, in chunks of up to 1 MiB written in order: its input (an import's
-- upload) and its result (an export's zip or CSV, a dry run's report). In Postgres, like
-- everything else, so any worker reads the input and any API replica streams the result,
-- one chunk at a time.
CREATE TABLE task_files (
    task_id uuid    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    slot    text    NOT NULL CHECK (slot IN ('input', 'result')),
    seq     integer NOT NULL,
    data    bytea   NOT NULL,
    PRIMARY KEY (task_id, slot, seq)
);

-- The items an import works through, one row each, fixed when the import planned them:
-- the cursor counts rows of this table.
CREATE TABLE task_items (
    task_id uuid    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq     integer NOT NULL,
    data    jsonb   NOT NULL,
    PRIMARY KEY (task_id, seq)
);

-- The original key (and parent's key) of each imported issue: the issue's reference to
-- where it came from, kept as long as the issue.
CREATE TABLE issue_imports (
    issue_id   uuid         PRIMARY KEY REFERENCES issues (id) ON DELETE CASCADE,
    task_id    uuid         NOT NULL,
    format     varchar(16)  NOT NULL,
    source_key varchar(255) NOT NULL,
    parent_key varchar(255)
);
CREATE INDEX issue_imports_task ON issue_imports (task_id, source_key);
