package auth

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/taskweave/taskweave/store"
)

// PendingCredential is a personal access token or API key whose row is not read yet:
// a read that loads the project of its path anyway (the board and the issue list,
// which clients poll) reads the credential's row and its user in that statement
// (project.LoadWithCredential), one statement instead of two
// (docs/performance.md#the-board-is-cached-and-checked-against-postgres-on-every-read).
type PendingCredential struct {
	Method Method
	Token  string
}

// Pending is the PendingCredential of a personal access token or API key; nil for
// any other bearer.
func Pending(token string) *PendingCredential {
	switch {
	case strings.HasPrefix(token, PATPrefix):
		return &PendingCredential{Method: MethodPAT, Token: token}
	case strings.HasPrefix(token, APIKeyPrefix):
		return &PendingCredential{Method: MethodAPIKey, Token: token}
	}
	return nil
}

// Hash is what the credential's row is found by.
func (pc *PendingCredential) Hash() string { return HashToken(pc.Token) }

// SQL is the credential's row found by its hash (the statement parameter param), as a
// sub-select of the columns uid (its user) and CredentialScan's, in the order
// CredentialScan reads them; no row when the hash is unknown. The same rows as
// Authenticate reads.
func (pc *PendingCredential) SQL(param string) string {
	if pc.Method == MethodAPIKey {
		return `(SELECT k.created_by AS uid, k.id, 'READ_WRITE'::text AS scope, k.project_id, kp.key AS project_key,
		k.last_used_at, k.expires_at, NULL::timestamptz AS revoked_at
	FROM project_api_keys AS k LEFT JOIN projects AS kp ON kp.id = k.project_id WHERE k.key_hash = ` + param + `)`
	}
	return `(SELECT t.user_id AS uid, t.id, t.scope::text, NULL::uuid AS project_id, NULL::text AS project_key,
		t.last_used_at, t.expires_at, t.revoked_at
	FROM personal_access_tokens AS t WHERE t.token_hash = ` + param + `)`
}

// CredentialColumns are the columns of PendingCredential.SQL that CredentialScan reads,
// over its alias c.
const CredentialColumns = "c.id, c.scope, c.project_id, c.project_key, c.last_used_at, c.expires_at, c.revoked_at"

// CredentialScan reads CredentialColumns through pgx (every column NULL when the hash
// was unknown).
type CredentialScan struct {
	id, projectID                pgtype.UUID
	scope, projectKey            *string
	lastUsed, expires, revokedAt *time.Time
}

// AppendDest appends the scan destinations of CredentialColumns to dst.
func (s *CredentialScan) AppendDest(dst []any) []any {
	return append(dst, &s.id, &s.scope, &s.projectID, &s.projectKey, &s.lastUsed, &s.expires, &s.revokedAt)
}

// PendingPrincipal judges a credential's row and its user's, read by
// project.LoadWithCredential, exactly as Authenticate judges them, and records
// lastUsedAt as it does (at most once a minute).
func (a *Authenticator) PendingPrincipal(ctx context.Context, pc *PendingCredential, s *CredentialScan, u *store.User) (*Principal, error) {
	if !s.id.Valid || u == nil || s.scope == nil {
		return nil, unauthenticatedOr(store.ErrNotFound)
	}
	row := &credentialRow{ID: s.id.Bytes, Scope: *s.scope, ProjectID: store.UUIDPtr(s.projectID), ProjectKey: s.projectKey,
		LastUsedAt: s.lastUsed, ExpiresAt: s.expires, RevokedAt: s.revokedAt, User: *u}
	return a.credentialPrincipal(ctx, pc.Method, row)
}
