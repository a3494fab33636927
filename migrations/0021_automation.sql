-- No-code automation: rules (trigger, condition tree, ordered actions) and the log of
-- their executions (docs/automation.md).

-- project_id is null for a SYSTEM rule, which applies to every project.
CREATE TABLE automation_rules (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id      uuid REFERENCES projects (id) ON DELETE CASCADE,
    scope           text NOT NULL CHECK (scope IN ('PROJECT', 'SYSTEM')),
    name            varchar(255) NOT NULL CHECK (btrim(name) <> ''),
    trigger_type    text NOT NULL CHECK (trigger_type IN ('ISSUE_CREATED', 'STATUS_CHANGED', 'PRIORITY_CHANGED',
                        'ASSIGNEE_CHANGED', 'COMMENT_ADDED', 'SPRINT_STARTED', 'SPRINT_COMPLETED')),
    -- The JSON text of the key/value filters, as the client sent it; null matches all.
    trigger_payload text,
    enabled         boolean NOT NULL DEFAULT true,
    created_by      uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT automation_rules_scope CHECK ((scope = 'SYSTEM') = (project_id IS NULL))
);
-- The lists: a project's rules, and the SYSTEM rules (project_id IS NULL), by createdAt.
CREATE INDEX automation_rules_project ON automation_rules (project_id, created_at, id);
-- The evaluation's read (the enabled rules of one trigger, of a project or SYSTEM) and
-- the event consumer's (which triggers a project has rules for).
CREATE INDEX automation_rules_enabled ON automation_rules (project_id, trigger_type) WHERE enabled;

-- A stamp per scope (a project, or SYSTEM under the nil uuid), drawn anew by every
-- change of one of its rules: a worker keeps the rules it read and reuses them while
-- the stamps it reads with each event are the ones it read them under. A rule's tree
-- and actions never change once saved (only its name and enabled flag do), so its row
-- is all the trigger watches.
CREATE SEQUENCE automation_stamp_seq;
CREATE TABLE automation_stamps (
    scope uuid PRIMARY KEY,
    stamp bigint NOT NULL
);
CREATE FUNCTION automation_bump_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO automation_stamps (scope, stamp)
    VALUES (coalesce(CASE WHEN TG_OP = 'DELETE' THEN OLD.project_id ELSE NEW.project_id END,
                     '00000000-0000-0000-0000-000000000000'), nextval('automation_stamp_seq'))
    ON CONFLICT (scope) DO UPDATE SET stamp = EXCLUDED.stamp;
    RETURN NULL;
END $$;
CREATE TRIGGER automation_rules_stamp AFTER INSERT OR UPDATE OR DELETE ON automation_rules
    FOR EACH ROW EXECUTE FUNCTION automation_bump_stamp();

-- The condition tree: a rule's root group has no parent; ordinal orders siblings.
CREATE TABLE automation_groups (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    rule_id         uuid NOT NULL REFERENCES automation_rules (id) ON DELETE CASCADE,
    parent_group_id uuid REFERENCES automation_groups (id) ON DELETE CASCADE,
    logic           text NOT NULL CHECK (logic IN ('AND', 'OR')),
    ordinal         integer NOT NULL CHECK (ordinal >= 0)
);
CREATE INDEX automation_groups_rule ON automation_groups (rule_id);
CREATE INDEX automation_groups_parent ON automation_groups (parent_group_id) WHERE parent_group_id IS NOT NULL;
CREATE UNIQUE INDEX automation_groups_one_root ON automation_groups (rule_id) WHERE parent_group_id IS NULL;

-- rule_id repeats the group's rule so a rule's conditions are read without the groups.
CREATE TABLE automation_conditions (
    id       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    rule_id  uuid NOT NULL REFERENCES automation_rules (id) ON DELETE CASCADE,
    group_id uuid NOT NULL REFERENCES automation_groups (id) ON DELETE CASCADE,
    ordinal  integer NOT NULL CHECK (ordinal >= 0),
    type     text NOT NULL CHECK (type IN ('ISSUE_TYPE', 'PRIORITY', 'ASSIGNEE', 'STATUS', 'STORY_POINTS', 'PROJECT')),
    operator varchar(20) NOT NULL CHECK (operator IN ('IS', 'IS_NOT', 'CONTAINS', 'GT', 'LT')),
    params   jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(params) = 'object')
);
CREATE INDEX automation_conditions_rule ON automation_conditions (rule_id);
CREATE INDEX automation_conditions_group ON automation_conditions (group_id);

-- Actions run in ascending position; ordinal (the request order) breaks ties.
CREATE TABLE automation_actions (
    id       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    rule_id  uuid NOT NULL REFERENCES automation_rules (id) ON DELETE CASCADE,
    position integer NOT NULL CHECK (position >= 0),
    ordinal  integer NOT NULL CHECK (ordinal >= 0),
    type     text NOT NULL CHECK (type IN ('SET_STATUS', 'SET_ASSIGNEE', 'SET_PRIORITY', 'SEND_NOTIFICATION',
                 'CREATE_COMMENT', 'CREATE_SUBTASK')),
    params   jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(params) = 'object')
);
CREATE INDEX automation_actions_rule ON automation_actions (rule_id, position, ordinal);

-- One row per rule evaluated for one triggering event. (event_id, rule_id) is unique:
-- a rule's actions commit with its row, so a retried or rescued evaluation job never
-- applies them twice. issue_id and project_id keep no reference: the log outlives them.
-- Workers draw id and event_id as time-ordered UUIDs (v7), so both indexes grow at
-- their end.
CREATE TABLE automation_executions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    rule_id     uuid NOT NULL, -- no foreign key: automation_rules_delete_executions below
    event_id    uuid NOT NULL,
    project_id  uuid,
    issue_id    uuid,
    event_type  text NOT NULL,
    status      text NOT NULL CHECK (status IN ('SUCCESS', 'SKIPPED', 'FAILED')),
    detail      text,
    chain_depth integer NOT NULL DEFAULT 0,
    -- When the triggering change happened; created_at - event_at is the event-to-execution latency.
    event_at    timestamptz,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT automation_executions_event_rule_key UNIQUE (event_id, rule_id)
);
-- The execution log of a rule, newest first; retention walks its old end per rule.
CREATE INDEX automation_executions_rule ON automation_executions (rule_id, created_at DESC, id DESC);

-- Deleting rules deletes their log, as ON DELETE CASCADE would. A foreign key would also
-- key-share-lock the rule for every row written, and every evaluation writes a row for
-- each rule its trigger loads: workers writing rows for the same rules at once would
-- turn those locks into multixacts. The writers check instead (without a lock) that the
-- rule still exists, so a row outlives its rule only when both happen in the same
-- instant; it is never listed, its rule being gone.
CREATE FUNCTION automation_delete_executions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM automation_executions WHERE rule_id IN (SELECT id FROM deleted_rules);
    RETURN NULL;
END $$;
CREATE TRIGGER automation_rules_delete_executions AFTER DELETE ON automation_rules
    REFERENCING OLD TABLE AS deleted_rules FOR EACH STATEMENT EXECUTE FUNCTION automation_delete_executions();
