-- Single sign-on: OIDC providers registered at run time, the one-time codes that hand a
-- finished login to the web client, and the external identity of a user.

CREATE TABLE sso_configs (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name              varchar(100) NOT NULL CHECK (btrim(name) <> ''),
    issuer_url        varchar(500) NOT NULL CHECK (btrim(issuer_url) <> ''),
    client_id         varchar(255) NOT NULL CHECK (btrim(client_id) <> ''),
    -- AES-GCM under SHA-256 of the JWT secret: base64(nonce || ciphertext || tag).
    client_secret_enc varchar(500) NOT NULL,
    enabled           boolean NOT NULL DEFAULT true,
    auto_provision    boolean NOT NULL DEFAULT true,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);

-- A finished external login waits here for POST /auth/sso/exchange: only the SHA-256
-- of the code is kept, the row is deleted when used, and it is worthless after
-- expires_at.
CREATE TABLE sso_login_codes (
    code_hash  char(64) PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider   varchar(50) NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sso_login_codes_expires ON sso_login_codes (expires_at);

-- One local user per external identity; logins look users up by it.
CREATE UNIQUE INDEX users_oauth_identity ON users (oauth_provider, oauth_subject)
    WHERE oauth_provider IS NOT NULL AND oauth_subject IS NOT NULL;
