-- Files whose attachment row is gone. Deleting an issue cascades its attachment rows
-- away inside the issue's transaction, which cannot touch the files; this trigger
-- remembers their stored names in that same transaction, so a file is queued for removal
-- exactly when its row's deletion commits. The API sweeps the queue (attachment.Sweep).
-- The attachment delete endpoint removes its file itself and clears its own entry.
CREATE TABLE attachment_orphans (
    stored_name text PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION attachments_orphan() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO attachment_orphans (stored_name) VALUES (OLD.stored_name) ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER attachments_orphan AFTER DELETE ON attachments
    FOR EACH ROW EXECUTE FUNCTION attachments_orphan();
