package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// Method is how a request proved who it is.
type Method string

// The three credential kinds.
const (
	MethodJWT    Method = "JWT"
	MethodPAT    Method = "PAT"
	MethodAPIKey Method = "API_KEY"
)

// System roles.
const (
	RoleAdmin  = "ADMIN"
	RoleMember = "MEMBER"
)

// PAT scopes.
const (
	ScopeReadOnly  = "READ_ONLY"
	ScopeReadWrite = "READ_WRITE"
)

// Principal is the authenticated caller of one request.
type Principal struct {
	UserID      uuid.UUID
	Email       string
	DisplayName string
	SystemRole  string
	Language    *string
	OrgID       *uuid.UUID
	Method      Method
	// Scope is the personal access token's scope; READ_WRITE for other methods.
	Scope string
	// ProjectID and ProjectKey bind an API key to its project.
	ProjectID  *uuid.UUID
	ProjectKey string
	// Family is an access token's login session (refresh-token family); nil for other
	// methods and for tokens without one.
	Family *uuid.UUID
}

// IsAdmin reports the system role ADMIN.
func (p *Principal) IsAdmin() bool { return p.SystemRole == RoleAdmin }

// Authorities are the granted authorities, ROLE_<systemRole>.
func (p *Principal) Authorities() []string { return []string{"ROLE_" + p.SystemRole} }

// Authenticator resolves a bearer credential to a Principal, re-checking the user's
// active flag on every call.
type Authenticator struct {
	db     bun.IDB
	tokens *Tokens
	now    func() time.Time
}

// NewAuthenticator builds an Authenticator.
func NewAuthenticator(db bun.IDB, tokens *Tokens) *Authenticator {
	return &Authenticator{db: db, tokens: tokens, now: time.Now}
}

// touchEvery limits lastUsedAt writes to one per credential per minute.
const touchEvery = time.Minute

// Authenticate resolves a bearer token; any failure is ErrUnauthenticated.
func (a *Authenticator) Authenticate(ctx context.Context, bearer string) (*Principal, error) {
	if pc := Pending(bearer); pc != nil {
		return a.credential(ctx, pc)
	}
	return a.accessToken(ctx, bearer, 0)
}

// AccessToken verifies an access JWT with an expiry grace (the STOMP CONNECT rule): a
// token expired less than grace ago is accepted only while the login session that
// issued it (its refresh-token family) is alive; one without a family gets no grace.
func (a *Authenticator) AccessToken(ctx context.Context, token string, grace time.Duration) (*Principal, error) {
	return a.accessToken(ctx, token, grace)
}

func (a *Authenticator) accessToken(ctx context.Context, token string, grace time.Duration) (*Principal, error) {
	claims, uid, err := a.tokens.Parse(token, TypeAccess, grace)
	if err != nil {
		return nil, err
	}
	return a.AccessUser(ctx, &AccessClaims{UserID: uid, claims: claims, expired: grace > 0 && a.tokens.expired(claims)})
}

// AccessClaims is an access token whose signature, type and expiry are verified but
// whose user row is not read yet: an endpoint that reads the row with other rows it
// needs anyway (the project of its path) saves a statement.
type AccessClaims struct {
	UserID uuid.UUID
	claims *Claims
	// expired: past exp, accepted by Parse's leeway (the STOMP grace) only.
	expired bool
}

// Family is the refresh-token family (login session) the token belongs to; nil for a
// token signed before access tokens carried one.
func (c *AccessClaims) Family() *uuid.UUID { return c.claims.Family }

// UserColumns are the columns of users that Principal checks, in store.User's names
// and in the order UserScan reads them.
var UserColumns = []string{"id", "email", "display_name", "system_role", "language", "org_id", "active", "deleted_at", "tokens_not_before"}

// UserScan reads the UserColumns of a user row through pgx, in a statement that reads
// other rows with it; the row may be missing (a LEFT JOIN: every column NULL).
type UserScan struct {
	id, org                    pgtype.UUID
	email, name, sysRole, lang *string
	active                     *bool
	deletedAt, notBefore       *time.Time
}

// AppendDest appends the scan destinations of UserColumns, in their order, to dst.
func (s *UserScan) AppendDest(dst []any) []any {
	return append(dst, &s.id, &s.email, &s.name, &s.sysRole, &s.lang, &s.org, &s.active, &s.deletedAt, &s.notBefore)
}

// User is the row read, nil when there was none.
func (s *UserScan) User() *store.User {
	if !s.id.Valid {
		return nil
	}
	u := &store.User{ID: s.id.Bytes, Email: deref(s.email), DisplayName: deref(s.name), SystemRole: deref(s.sysRole),
		Language: s.lang, OrgID: store.UUIDPtr(s.org), Active: s.active != nil && *s.active, DeletedAt: s.deletedAt}
	if s.notBefore != nil {
		u.TokensNotBefore = *s.notBefore
	}
	return u
}

// FamilyLiveSQL is the column that tells whether the refresh-token family ? is alive:
// one of its refresh tokens is neither revoked nor expired. Read with the user row, in
// the same statement, it costs a request no statement of its own (the partial index
// refresh_tokens_family_live answers it).
const FamilyLiveSQL = `EXISTS (SELECT 1 FROM refresh_tokens AS rt WHERE rt.family_id = ? AND NOT rt.revoked AND rt.expires_at > now())`

// VerifyAccessToken checks an access JWT without the database; the caller then reads
// the user row (UserColumns) and whether the token's family lives (FamilyLiveSQL), and
// calls Principal, or calls AccessUser.
func (a *Authenticator) VerifyAccessToken(token string) (*AccessClaims, error) {
	claims, uid, err := a.tokens.Parse(token, TypeAccess, 0)
	if err != nil {
		return nil, err
	}
	return &AccessClaims{UserID: uid, claims: claims}, nil
}

// accessRow is the token's user row and whether its family is alive.
type accessRow struct {
	store.User `bun:",extend"`
	FamilyLive bool `bun:"family_live,scanonly"`
}

// AccessUser reads the token's user row, and whether its family lives, in one statement
// and returns its principal (Principal).
func (a *Authenticator) AccessUser(ctx context.Context, c *AccessClaims) (*Principal, error) {
	var r accessRow
	q := a.db.NewSelect().Model(&r).Column(UserColumns...).Where("id = ?", c.UserID)
	if f := c.Family(); f != nil {
		q = q.ColumnExpr(FamilyLiveSQL+" AS family_live", *f)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, unauthenticatedOr(err)
	}
	return c.Principal(&r.User, r.FamilyLive)
}

// Principal checks the token's user row u (nil: there is none) as every request does:
// the user is active, not deleted, has not ended their sessions since this token was
// issued (tokens_not_before), and the token's login session is alive (familyLive, for a
// token with a family); a token past its exp (the STOMP grace) needs a family. Any
// failure is ErrUnauthenticated.
func (c *AccessClaims) Principal(u *store.User, familyLive bool) (*Principal, error) {
	if u == nil || u.ID != c.UserID {
		return nil, fmt.Errorf("%w: unknown credential", ErrUnauthenticated)
	}
	if !u.Active || u.DeletedAt != nil || c.claims.IssuedAt.Time.Before(u.TokensNotBefore) {
		return nil, fmt.Errorf("%w: user inactive or token revoked", ErrUnauthenticated)
	}
	fam := c.claims.Family
	if fam != nil && !familyLive {
		return nil, fmt.Errorf("%w: login session ended", ErrUnauthenticated)
	}
	if c.expired && fam == nil {
		return nil, fmt.Errorf("%w: no login session to extend the token", ErrTokenExpired)
	}
	p := principalOf(u, MethodJWT)
	p.Family = fam
	if c.claims.OrgID != nil {
		p.OrgID = c.claims.OrgID
	}
	return p, nil
}

// credentialRow is a token or key row joined with its user.
type credentialRow struct {
	ID         uuid.UUID
	Scope      string
	ProjectID  *uuid.UUID
	ProjectKey *string
	LastUsedAt *time.Time
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	User       store.User
}

const credentialUserColumns = `u.id, u.email, u.display_name, u.system_role, u.language, u.org_id, u.active, u.deleted_at`

// credential reads a personal access token's or API key's row by its hash
// (PendingCredential.SQL, the row the access statement reads too) with its user, and
// judges them (credentialPrincipal).
func (a *Authenticator) credential(ctx context.Context, pc *PendingCredential) (*Principal, error) {
	var r credentialRow
	u := &r.User
	err := a.db.QueryRowContext(ctx, `SELECT `+CredentialColumns+`, `+credentialUserColumns+`
		FROM `+pc.SQL("?")+` AS c JOIN users u ON u.id = c.uid`, pc.Hash()).Scan(
		&r.ID, &r.Scope, &r.ProjectID, &r.ProjectKey, &r.LastUsedAt, &r.ExpiresAt, &r.RevokedAt,
		&u.ID, &u.Email, &u.DisplayName, &u.SystemRole, &u.Language, &u.OrgID, &u.Active, &u.DeletedAt)
	if err != nil {
		return nil, unauthenticatedOr(err)
	}
	return a.credentialPrincipal(ctx, pc.Method, &r)
}

// credentialPrincipal judges a personal access token's (m MethodPAT) or API key's row
// and its user's (revoked, expired, user inactive or deleted: ErrUnauthenticated),
// records lastUsedAt (touch) and returns the principal. Authenticate and
// PendingPrincipal both judge by it.
func (a *Authenticator) credentialPrincipal(ctx context.Context, m Method, row *credentialRow) (*Principal, error) {
	now := a.now()
	if row.RevokedAt != nil || (row.ExpiresAt != nil && !row.ExpiresAt.After(now)) || !row.User.Active || row.User.DeletedAt != nil {
		return nil, fmt.Errorf("%w: credential revoked, expired or user inactive", ErrUnauthenticated)
	}
	table := "personal_access_tokens"
	if m == MethodAPIKey {
		table = "project_api_keys"
	}
	if err := a.touch(ctx, table, row, now); err != nil {
		return nil, err
	}
	p := principalOf(&row.User, m)
	if m == MethodAPIKey {
		p.ProjectID = row.ProjectID
		if row.ProjectKey != nil {
			p.ProjectKey = *row.ProjectKey
		}
		return p, nil
	}
	p.Scope = row.Scope
	return p, nil
}

// touch records lastUsedAt at most once a minute per credential.
func (a *Authenticator) touch(ctx context.Context, table string, row *credentialRow, now time.Time) error {
	if row.LastUsedAt != nil && now.Sub(*row.LastUsedAt) <= touchEvery {
		return nil
	}
	if _, err := a.db.NewUpdate().Table(table).Set("last_used_at = ?", now).Where("id = ?", row.ID).Exec(ctx); err != nil {
		return fmt.Errorf("touch %s: %w", table, store.Translate(err))
	}
	return nil
}

func principalOf(u *store.User, m Method) *Principal {
	return &Principal{
		UserID: u.ID, Email: u.Email, DisplayName: u.DisplayName, SystemRole: u.SystemRole,
		Language: u.Language, OrgID: u.OrgID, Method: m, Scope: ScopeReadWrite,
	}
}

func unauthenticatedOr(err error) error {
	if store.IsNotFound(err) {
		return fmt.Errorf("%w: unknown credential", ErrUnauthenticated)
	}
	return store.Translate(err)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
