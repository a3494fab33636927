-- Safe retries and rate-limit headers for API clients.

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

-- rate_limit_hit's answer with the bucket's state, for the RateLimit and
-- RateLimit-Policy reply headers (docs/api-conventions.md#rate-limits): wait is the
-- seconds to wait (0 = allowed; the hit is then recorded), remaining the hits left in
-- the window after this one, reset the seconds until the oldest hit leaves the window.
-- rate_limit_hit stays for replicas of the release before, answering through it.
CREATE FUNCTION rate_limit_take(p_bucket text, p_limit integer, p_window interval,
    OUT wait double precision, OUT remaining integer, OUT reset double precision)
LANGUAGE plpgsql AS $$
DECLARE
    n      integer;
    oldest timestamptz;
    now_ts timestamptz := clock_timestamp();
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('rate:' || p_bucket, 0));
    DELETE FROM rate_limit_hits WHERE bucket = p_bucket AND hit_at <= now_ts - p_window;
    SELECT count(*), min(hit_at) INTO n, oldest FROM rate_limit_hits WHERE bucket = p_bucket;
    IF n >= p_limit THEN
        wait := greatest(extract(epoch FROM (oldest + p_window - now_ts)), 0.001);
        remaining := 0;
        reset := wait;
        RETURN;
    END IF;
    INSERT INTO rate_limit_hits (bucket, hit_at) VALUES (p_bucket, now_ts);
    wait := 0;
    remaining := p_limit - n - 1;
    reset := extract(epoch FROM (coalesce(oldest, now_ts) + p_window - now_ts));
END $$;

CREATE OR REPLACE FUNCTION rate_limit_hit(p_bucket text, p_limit integer, p_window interval)
RETURNS double precision LANGUAGE sql AS $$
    SELECT wait FROM rate_limit_take(p_bucket, p_limit, p_window)
$$;
