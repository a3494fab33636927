-- Scheduled rules (docs/automation.md#scheduled-rules): triggerType SCHEDULED with a
-- 5-field cron schedule, an IANA time zone and a filter of the issue list's parameters
-- (JSON text of an object). The columns are NULL on the rules of other triggers.
ALTER TABLE automation_rules DROP CONSTRAINT automation_rules_trigger_type_check;
ALTER TABLE automation_rules ADD CONSTRAINT automation_rules_trigger_type_check CHECK (trigger_type IN ('ISSUE_CREATED',
    'STATUS_CHANGED', 'PRIORITY_CHANGED', 'ASSIGNEE_CHANGED', 'COMMENT_ADDED', 'SPRINT_STARTED', 'SPRINT_COMPLETED', 'SCHEDULED'));
ALTER TABLE automation_rules ADD COLUMN schedule text, ADD COLUMN timezone text, ADD COLUMN filter text,
    ADD CONSTRAINT automation_rules_scheduled CHECK ((trigger_type = 'SCHEDULED') = (schedule IS NOT NULL));

-- The next due slot of each scheduled rule, kept apart from the rule row: advancing it
-- every slot would otherwise bump the project's rule stamp (automation_rules_stamp) and
-- make every worker read the project's rules again. The periodic scan reads the due
-- ones by the index.
CREATE TABLE automation_schedules (
    rule_id     uuid PRIMARY KEY REFERENCES automation_rules (id) ON DELETE CASCADE,
    next_run_at timestamptz NOT NULL
);
CREATE INDEX automation_schedules_due ON automation_schedules (next_run_at);

-- One row per slot a scheduled rule ran for: (rule_id, slot) is unique, and the scan
-- inserts it with the run's River job in the transaction that advances next_run_at, so
-- a slot runs once whatever the number of workers and scans.
CREATE TABLE automation_runs (
    id          uuid PRIMARY KEY,
    rule_id     uuid NOT NULL REFERENCES automation_rules (id) ON DELETE CASCADE,
    project_id  uuid NOT NULL,
    slot        timestamptz NOT NULL,
    status      text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DONE', 'SKIPPED')),
    matched     integer NOT NULL DEFAULT 0,
    truncated   boolean NOT NULL DEFAULT false,
    succeeded   integer NOT NULL DEFAULT 0,
    skipped     integer NOT NULL DEFAULT 0,
    failed      integer NOT NULL DEFAULT 0,
    detail      text,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at timestamptz,
    CONSTRAINT automation_runs_rule_slot_key UNIQUE (rule_id, slot)
);
CREATE INDEX automation_runs_rule ON automation_runs (rule_id, slot DESC, id DESC);

-- The executions of a run (one per issue its filter matched); NULL for an event's.
ALTER TABLE automation_executions ADD COLUMN run_id uuid;
CREATE INDEX automation_executions_run ON automation_executions (run_id, created_at DESC, id DESC) WHERE run_id IS NOT NULL;
