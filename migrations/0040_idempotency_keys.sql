-- Idempotency-Key (docs/api-conventions.md#safe-retries): the first answer to a POST
-- sent with a key, kept so a retry of the same request by the same caller gets it again
-- instead of doing the work twice. Every API replica reads the same rows.
-- status is NULL while the first request runs; lease_until is when a running row whose
-- process died may be taken over by a retry. fingerprint is the SHA-256 of the method,
-- path and body: the same key with another request is refused.
CREATE TABLE idempotency_keys (
    scope        text        NOT NULL,
    key          text        NOT NULL,
    fingerprint  bytea       NOT NULL,
    status       integer,
    content_type text        NOT NULL DEFAULT '',
    location     text        NOT NULL DEFAULT '',
    body         bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    lease_until  timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);

-- The periodic expiry deletes by age.
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);
