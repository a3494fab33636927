-- A desk's e-mail address routes mail only once it is proven (docs/operations.md#service-desk):
-- by the code of a verification mail sent to it, or by a system ADMIN's approval. Until
-- then it is pending, routes nothing and blocks nobody: several desks may hold the same
-- pending address, and the first proven wins, which the partial unique index below
-- enforces (a second desk's proof fails on it).
ALTER TABLE service_desks
    ADD COLUMN email_verified_at     timestamptz,
    -- How it was proven: CODE (the verification mail), ADMIN (a system ADMIN) or
    -- MIGRATION (set before verification existed; see docs/operations.md#service-desk).
    ADD COLUMN email_verified_by     text CHECK (email_verified_by IN ('CODE', 'ADMIN', 'MIGRATION')),
    -- The pending address's code: its SHA-256, when it stops working, how many wrong
    -- codes were tried, and when the last mail was queued (resend is rate limited).
    ADD COLUMN email_code_hash       bytea,
    ADD COLUMN email_code_expires_at timestamptz,
    ADD COLUMN email_code_attempts   integer NOT NULL DEFAULT 0,
    ADD COLUMN email_code_sent_at    timestamptz,
    ADD CONSTRAINT service_desks_verified_address CHECK (email_verified_at IS NULL OR email_address IS NOT NULL);

-- Addresses set before this migration were unique already and have been receiving mail:
-- they stay effective, marked MIGRATION so an operator can review them.
UPDATE service_desks SET email_verified_at = clock_timestamp(), email_verified_by = 'MIGRATION'
WHERE email_address IS NOT NULL;

DROP INDEX service_desks_email_key;
CREATE UNIQUE INDEX service_desks_verified_email_key ON service_desks (lower(email_address))
    WHERE email_verified_at IS NOT NULL;

-- A ticket without a sender can be replied to by e-mail only with its reply token
-- (in the subject as [KEY-12 #token]); the SHA-256 of the token is kept, never the token.
ALTER TABLE service_desk_tickets ADD COLUMN reply_token_hash bytea;

-- A system ADMIN's list of the addresses waiting for approval, newest first.
CREATE INDEX service_desks_pending_email ON service_desks (updated_at DESC, id DESC)
    WHERE email_address IS NOT NULL AND email_verified_at IS NULL;
