-- E-mail digests of notifications (docs/api-conventions.md#notifications). A user with a
-- digest has a settings row (none is OFF). While it is on, the notification e-mails the
-- dispatcher would queue one by one wait in notification_digest_items instead; the
-- periodic digest job sends each user's due items as one e-mail and deletes them, and
-- notification_digests' key (user, end of period) makes that once per period whichever
-- worker runs it and however often.
CREATE TABLE notification_digest_settings (
    user_id    uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    digest     text NOT NULL CHECK (digest IN ('HOURLY', 'DAILY')),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE notification_digest_items (
    notification_id uuid PRIMARY KEY,
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    type            text NOT NULL,
    title           text NOT NULL,
    body            text NOT NULL,
    link            text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- A user's due items, oldest first.
CREATE INDEX notification_digest_items_user ON notification_digest_items (user_id, created_at);

CREATE TABLE notification_digests (
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    period_end timestamptz NOT NULL,
    items      integer NOT NULL DEFAULT 0,
    sent_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, period_end)
);
-- The job's cleanup of keys older than any period it could still send.
CREATE INDEX notification_digests_sent ON notification_digests (sent_at);
