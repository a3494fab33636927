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
