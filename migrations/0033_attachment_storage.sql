-- Where each attachment's file lives: 'disk' (TW_ATTACHMENTS_DIR) or 's3' (the bucket of
-- TW_STORAGE=s3). Rows written before this migration are on the disk. The storage move
-- (`taskweave storage migrate`) switches a row to 's3' once its object is verified.
ALTER TABLE attachments ADD COLUMN storage text NOT NULL DEFAULT 'disk'
    CONSTRAINT attachments_storage_check CHECK (storage IN ('disk', 's3'));

-- The move reads the rows still on the disk in creation order.
CREATE INDEX attachments_on_disk_idx ON attachments (created_at, id) WHERE storage = 'disk';

-- An orphaned file is removed from the storage it is in. A moved row leaves its disk
-- copy orphaned while the same stored name lives on in the bucket, so the key is the pair.
-- upload marks a file being uploaded: queued before its bytes are written and unqueued
-- in the transaction that commits its row, so a file whose process died between the two
-- is swept too (after an hour at least, far longer than an upload may take).
ALTER TABLE attachment_orphans ADD COLUMN storage text NOT NULL DEFAULT 'disk'
    CONSTRAINT attachment_orphans_storage_check CHECK (storage IN ('disk', 's3'));
ALTER TABLE attachment_orphans ADD COLUMN upload boolean NOT NULL DEFAULT false;
ALTER TABLE attachment_orphans DROP CONSTRAINT attachment_orphans_pkey;
ALTER TABLE attachment_orphans ADD PRIMARY KEY (stored_name, storage);

CREATE OR REPLACE FUNCTION attachments_orphan() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO attachment_orphans (stored_name, storage) VALUES (OLD.stored_name, OLD.storage)
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
