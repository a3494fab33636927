-- Project integrations with GitHub and GitLab, the raw incoming provider payloads and the
-- issue references (commits, pull/merge requests) parsed from them.

CREATE TABLE project_integrations (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id     uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    provider       text NOT NULL CHECK (provider IN ('GITHUB', 'GITLAB')),
    -- Kept in plaintext: verifying a signature or token needs the raw value
    -- (docs/api-conventions.md#authentication).
    webhook_secret text NOT NULL,
    repo_url       varchar(2048),
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT project_integrations_project_provider_key UNIQUE (project_id, provider)
);

-- The payload is stored byte for byte as it was signed (bytea, not jsonb: jsonb would
-- reorder it and refuse \u0000); the worker parses it later.
CREATE TABLE incoming_events (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id   uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    provider     text NOT NULL CHECK (provider IN ('GITHUB', 'GITLAB')),
    event_name   varchar(100) NOT NULL DEFAULT '',
    payload      bytea NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    processed_at timestamptz
);
CREATE INDEX incoming_events_project ON incoming_events (project_id);
-- The retention job deletes processed payloads by age.
CREATE INDEX incoming_events_processed ON incoming_events (processed_at) WHERE processed_at IS NOT NULL;

CREATE TABLE issue_refs (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    issue_id    uuid NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    provider    text NOT NULL CHECK (provider IN ('GITHUB', 'GITLAB')),
    ref_type    text NOT NULL CHECK (ref_type IN ('COMMIT', 'PR', 'BRANCH')),
    external_id varchar(255) NOT NULL,
    url         varchar(2048) NOT NULL,
    title       varchar(1024),
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- Also the index for listing an issue's refs.
    CONSTRAINT issue_refs_issue_ref_key UNIQUE (issue_id, provider, ref_type, external_id)
);
