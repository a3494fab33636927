-- Outgoing webhooks and their delivery records (docs/api-conventions.md#events-and-webhooks).

CREATE TABLE webhooks (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    url        varchar(2048) NOT NULL,
    -- Plaintext: signing needs the raw value (docs/api-conventions.md#authentication).
    secret     varchar(64) NOT NULL CHECK (secret <> ''),
    events     text[] NOT NULL CHECK (cardinality(events) >= 1),
    enabled    boolean NOT NULL DEFAULT true,
    created_by uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
-- Serves the list and the per-event lookup of a project's subscribers (a project has a
-- handful of webhooks; enabled and events are filtered on the few rows found).
CREATE INDEX webhooks_project ON webhooks (project_id, created_at);

CREATE TABLE webhook_deliveries (
    -- Chosen by the writer: the id is inside the payload it stores.
    id              uuid PRIMARY KEY,
    webhook_id      uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_type      varchar(100) NOT NULL,
    -- Exactly the bytes sent.
    payload         text NOT NULL,
    response_status integer,
    response_body   text,
    -- Why the last attempt failed without a status (network error, timeout, refused
    -- address), or the status line; NULL after a success.
    last_error      text,
    attempt_count   integer NOT NULL DEFAULT 0,
    next_retry_at   timestamptz,
    delivered_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);
