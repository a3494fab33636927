-- Comments, attachments and in-app notifications ([5/5]).

-- A comment's author is null for a system comment. Soft delete keeps the row (and the
-- activity entry pointing at it); lists filter deleted_at IS NULL.
CREATE TABLE comments (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    issue_id   uuid NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    author_id  uuid REFERENCES users (id),
    body       text NOT NULL,
    edited_at  timestamptz,
    deleted_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- The list order is createdAt desc, id desc (the tie-breaker keeps paging stable).
CREATE INDEX comments_issue ON comments (issue_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;

-- stored_name is UUID + original extension, generated here, never a client's text.
CREATE TABLE attachments (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    issue_id     uuid NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    uploader_id  uuid NOT NULL REFERENCES users (id),
    filename     text NOT NULL CHECK (char_length(filename) BETWEEN 1 AND 255),
    stored_name  text NOT NULL UNIQUE CHECK (char_length(stored_name) <= 255),
    content_type text NOT NULL CHECK (char_length(content_type) <= 127),
    size         bigint NOT NULL CHECK (size >= 0),
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX attachments_issue ON attachments (issue_id, created_at);

-- In-app notifications. title and body are rendered in the recipient's language when
-- the notification is created. The id is chosen by the job that creates it, so a retried
-- job never notifies twice (INSERT ... ON CONFLICT DO NOTHING).
CREATE TABLE notifications (
    id          uuid PRIMARY KEY,
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    type        text NOT NULL,
    title       text NOT NULL,
    body        text NOT NULL,
    link        text,
    project_key text,
    issue_key   text,
    read        boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX notifications_user ON notifications (user_id, created_at DESC, id DESC);
CREATE INDEX notifications_user_unread ON notifications (user_id) WHERE NOT read;
