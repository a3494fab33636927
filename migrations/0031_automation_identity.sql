-- Automation limits, identity and creator checks (docs/automation.md).

-- The action budget of every chain: a change a person made starts a chain (its id is
-- the root event's), and every rule run by the evaluations that change causes, at any
-- depth, spends its actions from it. One row per chain that acted; the cleanup job
-- deletes rows older than a week.
CREATE TABLE automation_chains (
    chain_id   uuid PRIMARY KEY,
    project_id uuid NOT NULL,
    actions    integer NOT NULL CHECK (actions >= 0),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX automation_chains_created ON automation_chains (created_at);

-- The actions the rules of one project ran in one minute (window_start), shared by
-- every worker: past TW_AUTOMATION_PROJECT_RATE a rule is skipped until the next one.
CREATE TABLE automation_project_rates (
    project_id   uuid NOT NULL,
    window_start timestamptz NOT NULL,
    actions      integer NOT NULL CHECK (actions >= 0),
    PRIMARY KEY (project_id, window_start)
);

-- The built-in automation user: the author of what rules write (comments, subtasks,
-- field changes), so a rule never speaks as a person while authorId stays a user id.
-- It has no password and no provider, and deleted_at set: nobody signs in as it, and
-- every list of live accounts (admin list, search, member lists) leaves it out. The
-- id is fixed and well known (store.AutomationUserID).
INSERT INTO users (id, email, display_name, password_hash, system_role, active, deleted_at, created_at, updated_at)
VALUES ('00000000-0000-4000-8000-00000000a070', 'automation@automation.taskweave.invalid', 'Automation', NULL, 'MEMBER',
        false, 'epoch', 'epoch', 'epoch')
ON CONFLICT (id) DO NOTHING;

-- Rows a rule's transaction writes name the rule (and the activity its creator): the
-- rule's transaction sets these two settings (set_config, transaction-local), so every
-- insert in it, through whatever domain service, carries them without passing them
-- down. Outside a rule they are unset and the columns stay null. No foreign keys: the
-- rows outlive a deleted rule.
ALTER TABLE comments ADD COLUMN rule_id uuid
    DEFAULT nullif(current_setting('taskweave.rule_id', true), '')::uuid;
ALTER TABLE issue_activities ADD COLUMN rule_id uuid
    DEFAULT nullif(current_setting('taskweave.rule_id', true), '')::uuid;
ALTER TABLE issue_activities ADD COLUMN rule_creator_id uuid
    DEFAULT nullif(current_setting('taskweave.rule_creator_id', true), '')::uuid;

-- A rule acts only while its creator may (an active user with at least MEMBER in the
-- rule's project; a system ADMIN for a SYSTEM rule). A rule whose creator lost that
-- right is disabled with the reason, shown in the rule list, until an admin re-enables
-- it (its creator may again) or takes it over (becomes its creator).
ALTER TABLE automation_rules ADD COLUMN disabled_reason text;
ALTER TABLE automation_rules ADD COLUMN disabled_at timestamptz;
-- The account and membership changes disable the rules of one creator.
CREATE INDEX automation_rules_created_by ON automation_rules (created_by) WHERE enabled;
