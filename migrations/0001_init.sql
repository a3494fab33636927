-- Accounts, credentials, audit and the shared rate-limit log.

CREATE TABLE users (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email             varchar(255) NOT NULL,
    display_name      varchar(255) NOT NULL,
    avatar_url        varchar(512),
    password_hash     varchar(255),
    oauth_provider    varchar(50),
    oauth_subject     varchar(255),
    system_role       text NOT NULL DEFAULT 'MEMBER' CHECK (system_role IN ('ADMIN', 'MEMBER')),
    org_id            uuid,
    active            boolean NOT NULL DEFAULT true,
    language          text CHECK (language IN ('en', 'de')),
    -- Access JWTs issued before this instant are refused (deactivation, deletion).
    tokens_not_before timestamptz NOT NULL DEFAULT 'epoch',
    deleted_at        timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT users_email_key UNIQUE (email),
    CONSTRAINT users_email_lower CHECK (email = lower(email)),
    CONSTRAINT users_display_name_not_blank CHECK (btrim(display_name) <> '')
);
CREATE INDEX users_active_admins ON users (id) WHERE system_role = 'ADMIN' AND active AND deleted_at IS NULL;

CREATE TABLE refresh_tokens (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    token_hash  char(64) NOT NULL CONSTRAINT refresh_tokens_token_hash_key UNIQUE,
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at  timestamptz NOT NULL,
    revoked     boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refresh_tokens_user_live ON refresh_tokens (user_id) WHERE NOT revoked;

CREATE TABLE personal_access_tokens (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         varchar(255) NOT NULL CHECK (btrim(name) <> ''),
    token_hash   char(64) NOT NULL CONSTRAINT personal_access_tokens_token_hash_key UNIQUE,
    token_prefix varchar(16) NOT NULL,
    scope        text NOT NULL CHECK (scope IN ('READ_ONLY', 'READ_WRITE')),
    last_used_at timestamptz,
    expires_at   timestamptz,
    revoked_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX personal_access_tokens_user ON personal_access_tokens (user_id, created_at);

CREATE TABLE organizations (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       varchar(255) NOT NULL CHECK (btrim(name) <> ''),
    slug       varchar(100) NOT NULL CONSTRAINT organizations_slug_key UNIQUE CHECK (slug ~ '^[a-z0-9-]+$'),
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO organizations (name, slug) VALUES ('Default', 'default');
ALTER TABLE users ADD CONSTRAINT users_org_fk FOREIGN KEY (org_id) REFERENCES organizations (id) ON DELETE SET NULL;

-- Projects are filled out by the next migration; API keys need the key to scope themselves.
CREATE TABLE projects (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    key         varchar(10) NOT NULL CONSTRAINT projects_key_key UNIQUE CHECK (key ~ '^[A-Z0-9]{2,10}$'),
    name        varchar(255) NOT NULL CHECK (btrim(name) <> ''),
    description text,
    owner_id    uuid NOT NULL REFERENCES users (id),
    archived    boolean NOT NULL DEFAULT false,
    node_id     varchar(100),
    org_id      uuid REFERENCES organizations (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE project_api_keys (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         varchar(255) NOT NULL CHECK (btrim(name) <> ''),
    key_hash     char(64) NOT NULL CONSTRAINT project_api_keys_key_hash_key UNIQUE,
    key_prefix   varchar(12) NOT NULL,
    project_id   uuid REFERENCES projects (id) ON DELETE CASCADE,
    created_by   uuid NOT NULL REFERENCES users (id),
    last_used_at timestamptz,
    expires_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX project_api_keys_project ON project_api_keys (project_id, created_at);

CREATE TABLE notification_preferences (
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    type    text NOT NULL,
    in_app  boolean NOT NULL DEFAULT true,
    email   boolean NOT NULL DEFAULT true,
    PRIMARY KEY (user_id, type)
);

CREATE TABLE audit_config (
    level   text PRIMARY KEY CHECK (level IN ('SECURITY', 'WRITE', 'ALL')),
    enabled boolean NOT NULL
);
INSERT INTO audit_config (level, enabled) VALUES ('SECURITY', true), ('WRITE', false), ('ALL', false);

CREATE TABLE audit_events (
    id            uuid PRIMARY KEY,
    "timestamp"   timestamptz NOT NULL DEFAULT now(),
    user_id       uuid REFERENCES users (id) ON DELETE SET NULL,
    user_email    varchar(255) NOT NULL,
    project_id    uuid REFERENCES projects (id) ON DELETE SET NULL,
    org_id        uuid,
    action        text NOT NULL,
    level         text NOT NULL CHECK (level IN ('SECURITY', 'WRITE', 'ALL')),
    resource_type varchar(50),
    resource_id   varchar(100),
    details       text,
    ip_address    varchar(45),
    user_agent    varchar(500)
);
CREATE INDEX audit_events_time ON audit_events ("timestamp" DESC, id DESC);
CREATE INDEX audit_events_user_time ON audit_events (user_id, "timestamp" DESC);
CREATE INDEX audit_events_project_time ON audit_events (project_id, "timestamp" DESC);
CREATE INDEX audit_events_action_time ON audit_events (action, "timestamp" DESC);

-- Audit rows are append-only: no endpoint may change them, and neither may a stray UPDATE.
CREATE FUNCTION audit_events_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The only change allowed is the ON DELETE SET NULL of the user or project reference.
    IF TG_OP = 'UPDATE'
       AND (NEW.user_id IS NULL OR NEW.user_id = OLD.user_id)
       AND (NEW.project_id IS NULL OR NEW.project_id = OLD.project_id)
       AND (NEW.id, NEW."timestamp", NEW.user_email, NEW.org_id, NEW.action, NEW.level, NEW.resource_type,
            NEW.resource_id, NEW.details, NEW.ip_address, NEW.user_agent)
           IS NOT DISTINCT FROM
           (OLD.id, OLD."timestamp", OLD.user_email, OLD.org_id, OLD.action, OLD.level, OLD.resource_type,
            OLD.resource_id, OLD.details, OLD.ip_address, OLD.user_agent) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'audit events are immutable' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_immutable();

-- Sliding-window log shared by every API replica (login, register, ticket submission).
CREATE TABLE rate_limit_hits (
    bucket text NOT NULL,
    hit_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX rate_limit_hits_bucket_time ON rate_limit_hits (bucket, hit_at);

-- One round trip per limited request: the advisory lock serializes hits of one bucket
-- across replicas, stale hits are dropped, and the answer is the number of seconds to
-- wait (0 = allowed; the hit is then recorded).
CREATE FUNCTION rate_limit_hit(p_bucket text, p_limit integer, p_window interval)
RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE
    n      integer;
    oldest timestamptz;
    now_ts timestamptz := clock_timestamp();
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('rate:' || p_bucket, 0));
    DELETE FROM rate_limit_hits WHERE bucket = p_bucket AND hit_at <= now_ts - p_window;
    SELECT count(*), min(hit_at) INTO n, oldest FROM rate_limit_hits WHERE bucket = p_bucket;
    IF n >= p_limit THEN
        RETURN greatest(extract(epoch FROM (oldest + p_window - now_ts)), 0.001);
    END IF;
    INSERT INTO rate_limit_hits (bucket, hit_at) VALUES (p_bucket, now_ts);
    RETURN 0;
END $$;
