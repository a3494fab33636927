-- Single sign-on account linking (docs/api-conventions.md#single-sign-on): the external
-- identities linked to each account, the e-mail domains a registration is trusted for,
-- and the flow states already used.

-- One row per linked identity: a login finds its account here and nowhere else. An
-- account may be linked to several registrations, each registration's subject to one
-- account. users.oauth_provider and users.oauth_subject held the one identity an account
-- could have before; they are copied here and no longer written.
CREATE TABLE sso_identities (
    provider   varchar(50)  NOT NULL,
    subject    varchar(255) NOT NULL,
    user_id    uuid         NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz  NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, subject),
    UNIQUE (user_id, provider)
);

INSERT INTO sso_identities (provider, subject, user_id)
SELECT oauth_provider, oauth_subject, id FROM users
WHERE oauth_provider IS NOT NULL AND oauth_subject IS NOT NULL AND deleted_at IS NULL
ON CONFLICT DO NOTHING;

-- The e-mail domains (lower case, exact match) for which a registration's verified
-- e-mail may link an existing account on its first login; empty: never.
ALTER TABLE sso_configs ADD COLUMN allowed_domains text[] NOT NULL DEFAULT '{}';

-- A flow's state works once: its flow id is recorded by the callback that uses it, and
-- the row is worthless (and swept) after the state's own expiry.
CREATE TABLE sso_used_states (
    flow_id    varchar(64) PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
CREATE INDEX sso_used_states_expires ON sso_used_states (expires_at);
