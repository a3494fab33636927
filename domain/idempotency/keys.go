// Package idempotency keeps the answers to requests sent with an Idempotency-Key, so
// a client may retry a POST without the work being done twice. The keys live in
// Postgres, so a retry that reaches another replica finds the first answer there.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// TTL is how long a key and its answer are kept (docs/api-conventions.md#safe-retries).
const TTL = 24 * time.Hour

// MaxBody is the largest answer body kept for replay. A larger answer is not kept:
// its key stays claimed, and a retry is told so (ErrNotStored).
const MaxBody = 256 << 10

// ErrInProgress is a retry that arrived while the first request with its key is still
// running (on this or another replica).
var ErrInProgress = errors.New("idempotency: the first request with this key is still running")

// ErrKeyReused is a key sent again with another request (method, path or body).
var ErrKeyReused = errors.New("idempotency: the key was sent with another request")

// ErrNotStored is a retry of a request whose answer was too large (or streamed) to be
// kept: the work was done, but its answer cannot be sent again.
var ErrNotStored = errors.New("idempotency: the first answer was not kept")

// Request identifies one keyed request: whose (Scope), which key, and a fingerprint of
// what was asked (Fingerprint).
type Request struct {
	Scope       string
	Key         string
	Fingerprint []byte
}

// Fingerprint is the SHA-256 of the method, the target (path and query) and the body.
func Fingerprint(method, target string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(target))
	h.Write([]byte{0})
	h.Write(body)
	return h.Sum(nil)
}

// Response is the kept answer of a finished request.
type Response struct {
	Status      int
	ContentType string
	Location    string
	Body        []byte
	// Stored is false for an answer that was too large or streamed: Finish records its
	// status only.
	Stored bool
}

// Keys reads and writes the idempotency_keys table.
type Keys struct{ db bun.IDB }

// NewKeys is the key table on db.
func NewKeys(db bun.IDB) *Keys { return &Keys{db: db} }

// claim inserts the key, or takes over an expired one, or a running one whose lease
// ran out (its process presumably died) for the same request; it answers whether the
// caller now holds the key.
const claim = `INSERT INTO idempotency_keys AS k (scope, key, fingerprint, lease_until, expires_at)
VALUES (?, ?, ?, now() + make_interval(secs => ?), now() + make_interval(secs => ?))
ON CONFLICT (scope, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status = NULL,
	content_type = '', location = '', body = NULL, created_at = now(),
	lease_until = EXCLUDED.lease_until, expires_at = EXCLUDED.expires_at
WHERE k.expires_at <= now() OR (k.status IS NULL AND k.lease_until <= now() AND k.fingerprint = EXCLUDED.fingerprint)
RETURNING true`

type keyRow struct {
	Fingerprint []byte
	Status      sql.NullInt64
	ContentType string
	Location    string
	Body        []byte
	Kept        bool
}

// Begin claims r's key for a request that may run for lease at most. It answers
// (nil, nil) when the caller holds the key and must run the request and then call
// Finish or Release; the kept answer to replay; or ErrInProgress, ErrKeyReused,
// ErrNotStored.
func (k *Keys) Begin(ctx context.Context, r Request, lease time.Duration) (*Response, error) {
	// A row released between the claim and the read is claimed again.
	for range 3 {
		var claimed []bool
		err := k.db.NewRaw(claim, r.Scope, r.Key, r.Fingerprint, lease.Seconds(), TTL.Seconds()).Scan(ctx, &claimed)
		if err != nil {
			return nil, fmt.Errorf("claim idempotency key: %w", err)
		}
		if len(claimed) == 1 {
			return nil, nil
		}
		var rows []keyRow
		err = k.db.NewRaw(`SELECT fingerprint, status, content_type, location, body, body IS NOT NULL AS kept FROM idempotency_keys
			WHERE scope = ? AND key = ?`, r.Scope, r.Key).Scan(ctx, &rows)
		if err != nil {
			return nil, fmt.Errorf("read idempotency key: %w", err)
		}
		if len(rows) == 0 {
			continue
		}
		row := rows[0]
		switch {
		case !bytes.Equal(row.Fingerprint, r.Fingerprint):
			return nil, ErrKeyReused
		case !row.Status.Valid:
			return nil, ErrInProgress
		case !row.Kept:
			return nil, ErrNotStored
		}
		return &Response{Status: int(row.Status.Int64), ContentType: row.ContentType, Location: row.Location,
			Body: row.Body, Stored: true}, nil
	}
	return nil, ErrInProgress
}

// Finish keeps the answer of the request that holds r's key, for the rest of the key's
// life. An answer that is not Stored (too large, streamed) keeps its status only.
func (k *Keys) Finish(ctx context.Context, r Request, resp Response) error {
	var body []byte
	if resp.Stored {
		body = resp.Body
		if body == nil {
			body = []byte{}
		}
	}
	_, err := k.db.NewRaw(`UPDATE idempotency_keys SET status = ?, content_type = ?, location = ?, body = ?,
		lease_until = expires_at WHERE scope = ? AND key = ? AND fingerprint = ? AND status IS NULL`,
		resp.Status, resp.ContentType, resp.Location, body, r.Scope, r.Key, r.Fingerprint).Exec(ctx)
	if err != nil {
		return fmt.Errorf("keep idempotent answer: %w", err)
	}
	return nil
}

// Release gives r's key up without an answer (the request failed in a way a retry may
// mend: a 5xx, a rate limit), so the next request with it runs.
func (k *Keys) Release(ctx context.Context, r Request) error {
	_, err := k.db.NewRaw(`DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND fingerprint = ? AND status IS NULL`,
		r.Scope, r.Key, r.Fingerprint).Exec(ctx)
	if err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}

// Expire deletes the keys past their life and answers how many.
func (k *Keys) Expire(ctx context.Context) (int, error) {
	res, err := k.db.NewRaw(`DELETE FROM idempotency_keys WHERE expires_at <= now()`).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("expire idempotency keys: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
