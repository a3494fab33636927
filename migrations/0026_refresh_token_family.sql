-- Refresh-token reuse detection (docs/api-conventions.md#authentication). Every refresh
-- token belongs to the family of the login it descends from: a login starts one, each
-- rotation passes it on. rotated_at marks a token consumed by a rotation, so presenting
-- it again is told apart from presenting one revoked by a logout: a reuse revokes the
-- whole family. Tokens issued before this migration are each a family of their own.
ALTER TABLE refresh_tokens ADD COLUMN family_id uuid, ADD COLUMN rotated_at timestamptz;
UPDATE refresh_tokens SET family_id = id;
ALTER TABLE refresh_tokens ALTER COLUMN family_id SET NOT NULL;
CREATE INDEX refresh_tokens_family_live ON refresh_tokens (family_id) WHERE NOT revoked;
