package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/revoke"
	"github.com/taskweave/taskweave/store"
)

// Meta is what the edge knows about a request, for audit rows.
type Meta struct {
	IP        string
	UserAgent string
}

// TokenPair is an access and a refresh token.
type TokenPair struct {
	AccessToken  string
	RefreshToken string
	ExpiresIn    time.Duration
}

// Options are the account rules that come from configuration.
type Options struct {
	RegistrationEnabled bool
	Password            PasswordParams
}

// Service implements registration, login, token rotation and the own-account and admin
// user operations.
type Service struct {
	db     *bun.DB
	tokens *Tokens
	audit  *audit.Recorder
	opts   Options
	now    func() time.Time
	// dummyHash keeps unknown-user logins as slow as wrong-password ones.
	dummyHash string
}

// NewService wires the account rules.
func NewService(db *bun.DB, tokens *Tokens, rec *audit.Recorder, opts Options) (*Service, error) {
	dummy, err := HashPassword(opts.Password, "taskweave-timing-equaliser")
	if err != nil {
		return nil, err
	}
	return &Service{db: db, tokens: tokens, audit: rec, opts: opts, now: time.Now, dummyHash: dummy}, nil
}

// Tokens exposes the signer (switch-org and STOMP need it).
func (s *Service) Tokens() *Tokens { return s.tokens }

// Registration is a validated register request.
type Registration struct {
	Email       string
	DisplayName string
	Password    string
}

// Serializes registrations so exactly one first user becomes ADMIN.
const firstUserLock = "taskweave.first-user"

// Register creates an account (the very first one is ADMIN) and signs it in.
func (s *Service) Register(ctx context.Context, r Registration, meta Meta) (*store.User, TokenPair, error) {
	if !s.opts.RegistrationEnabled {
		return nil, TokenPair{}, ErrRegistrationDisabled
	}
	hash, err := HashPassword(s.opts.Password, r.Password)
	if err != nil {
		return nil, TokenPair{}, err
	}
	u := &store.User{Email: strings.ToLower(strings.TrimSpace(r.Email)), DisplayName: strings.TrimSpace(r.DisplayName), PasswordHash: &hash, Active: true}
	var pair TokenPair
	err = store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", firstUserLock); err != nil {
			return err
		}
		// The built-in automation user (migration 0031) is no registered account.
		any, err := tx.NewSelect().Table("users").Where("id <> ?", store.AutomationUserID).Exists(ctx)
		if err != nil {
			return err
		}
		u.SystemRole = RoleMember
		if !any {
			u.SystemRole = RoleAdmin
		}
		if _, err := tx.NewInsert().Model(u).Returning("*").Exec(ctx); err != nil {
			if store.IsUnique(err, "users_email_key") {
				return ErrDuplicateEmail
			}
			return err
		}
		if pair, err = s.issuePair(ctx, tx, u.ID, uuid.New()); err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, audit.Entry{Action: audit.UserRegistered, UserID: &u.ID, UserEmail: u.Email,
			ResourceType: "USER", ResourceID: u.ID.String(), IPAddress: meta.IP, UserAgent: meta.UserAgent})
	})
	if err != nil {
		return nil, TokenPair{}, wrap("register", err)
	}
	return u, pair, nil
}

// Login checks a password. Every refusal is ErrInvalidCredentials and is audited as
// LOGIN_FAILED in a transaction of its own.
func (s *Service) Login(ctx context.Context, email, password string, meta Meta) (*store.User, TokenPair, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	var u store.User
	err := s.db.NewSelect().Model(&u).Where("email = ?", email).Scan(ctx)
	if err = store.Translate(err); err != nil && !store.IsNotFound(err) {
		return nil, TokenPair{}, wrap("login", err)
	}
	found := err == nil
	hash := s.dummyHash
	if found && u.PasswordHash != nil {
		hash = *u.PasswordHash
	}
	ok, verr := VerifyPassword(hash, password)
	if !found || verr != nil || !ok || u.PasswordHash == nil || !u.Active || u.DeletedAt != nil {
		e := audit.Entry{Action: audit.LoginFailed, UserEmail: email, ResourceType: "USER", IPAddress: meta.IP, UserAgent: meta.UserAgent}
		if found {
			e.UserID, e.ResourceID = &u.ID, u.ID.String()
		}
		if err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error { return s.audit.Record(ctx, tx, e) }); err != nil {
			return nil, TokenPair{}, wrap("login", err)
		}
		return nil, TokenPair{}, ErrInvalidCredentials
	}
	var pair TokenPair
	err = store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if pair, err = s.issuePair(ctx, tx, u.ID, uuid.New()); err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, audit.Entry{Action: audit.LoginSuccess, UserID: &u.ID, UserEmail: u.Email,
			ResourceType: "USER", ResourceID: u.ID.String(), IPAddress: meta.IP, UserAgent: meta.UserAgent})
	})
	if err != nil {
		return nil, TokenPair{}, wrap("login", err)
	}
	return &u, pair, nil
}

// Refresh consumes a refresh token and issues a new pair of the same family (the login
// it descends from). The consumed token is revoked and marked rotated in the same
// statement that checks it, so two concurrent uses cannot both succeed.
//
// A token that a rotation already consumed is a reuse (OAuth 2.0 Security BCP, RFC 9700
// §4.14.2): one of the two parties holding it, the user or a thief, is not who it
// claims to be, so every refresh token of the family is revoked and a SECURITY audit
// row (REFRESH_TOKEN_REUSED) written; both are committed, and the caller still gets
// ErrInvalidRefreshToken.
func (s *Service) Refresh(ctx context.Context, token string, meta Meta) (TokenPair, error) {
	_, uid, err := s.tokens.Parse(token, TypeRefresh, 0)
	if err != nil {
		return TokenPair{}, ErrInvalidRefreshToken
	}
	var (
		pair   TokenPair
		reused bool
	)
	err = store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		// The user row is share-locked first, as endSessions and retire lock it (to
		// write) before they revoke: a rotation and a logout then run one after the
		// other, and the logout's revocation sees the token the rotation issued.
		var u store.User
		if err := tx.NewSelect().Model(&u).Column("active", "deleted_at").Where("id = ?", uid).For("SHARE").Scan(ctx); err != nil {
			return store.Translate(err)
		}
		now := s.now()
		var family uuid.UUID
		err := tx.NewUpdate().Table("refresh_tokens").Set("revoked = true, rotated_at = ?", now).
			Where("token_hash = ? AND user_id = ? AND NOT revoked AND expires_at > ?", HashToken(token), uid, now).
			Returning("family_id").Scan(ctx, &family)
		if store.IsNotFound(err) {
			reused, err = s.detectReuse(ctx, tx, token, uid, meta)
			if err != nil || reused {
				return err
			}
			return ErrInvalidRefreshToken
		}
		if err != nil {
			return err
		}
		if !u.Active || u.DeletedAt != nil {
			return ErrInvalidRefreshToken
		}
		pair, err = s.issuePair(ctx, tx, uid, family)
		return err
	})
	if store.IsNotFound(err) || (err == nil && reused) {
		return TokenPair{}, ErrInvalidRefreshToken
	}
	return pair, wrap("refresh", err)
}

// detectReuse handles a refresh token the rotation did not accept: when a rotation had
// consumed it (rotated_at set, whatever happened to the family since), it revokes the
// family, and with it the family's access tokens and live sessions, records
// REFRESH_TOKEN_REUSED, and reports true. Unknown, expired and
// logged-out tokens are no reuse.
func (s *Service) detectReuse(ctx context.Context, tx bun.Tx, token string, uid uuid.UUID, meta Meta) (bool, error) {
	var rt store.RefreshToken
	err := tx.NewSelect().Model(&rt).Column("id", "family_id", "rotated_at").
		Where("token_hash = ? AND user_id = ?", HashToken(token), uid).Scan(ctx)
	if store.IsNotFound(err) || (err == nil && rt.RotatedAt == nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	res, err := tx.NewUpdate().Table("refresh_tokens").Set("revoked = true").
		Where("family_id = ? AND NOT revoked", rt.FamilyID).Exec(ctx)
	if err != nil {
		return false, err
	}
	revoked, _ := res.RowsAffected()
	// The family's access tokens die with it (Principal); its live sessions close on
	// every replica.
	if err := revoke.Users(ctx, tx, uid); err != nil {
		return false, err
	}
	var email string
	if err := tx.NewSelect().Table("users").Column("email").Where("id = ?", uid).Scan(ctx, &email); err != nil {
		return false, err
	}
	details, err := json.Marshal(map[string]any{"tokenId": rt.ID, "familyId": rt.FamilyID, "rotatedAt": rt.RotatedAt.UTC(),
		"revokedTokens": revoked})
	if err != nil {
		return false, err
	}
	return true, s.audit.Record(ctx, tx, audit.Entry{Action: audit.RefreshTokenReused, UserID: &uid, UserEmail: email,
		ResourceType: "USER", ResourceID: uid.String(), Details: string(details), IPAddress: meta.IP, UserAgent: meta.UserAgent})
}

// Logout ends every login session of the caller (endSessions): their refresh tokens,
// the access tokens they issued and the live STOMP sessions those opened.
func (s *Service) Logout(ctx context.Context, p *Principal, meta Meta) error {
	return wrap("logout", store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if err := s.endSessions(ctx, tx, p.UserID); err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, audit.Entry{Action: audit.Logout, UserID: &p.UserID, UserEmail: p.Email,
			ResourceType: "USER", ResourceID: p.UserID.String(), IPAddress: meta.IP, UserAgent: meta.UserAgent})
	}))
}

// SwitchOrg issues an access token scoped to an organization the caller belongs to, in
// the caller's login session (it ends with it). member reports the membership;
// organizations own that rule.
func (s *Service) SwitchOrg(p *Principal, orgID uuid.UUID) (string, error) {
	tok, _, err := s.tokens.IssueAccess(p.UserID, &orgID, p.Family)
	return tok, err
}

// issuePair signs an access token and a refresh token of family (a new uuid for a login,
// the consumed token's for a rotation) and stores the refresh token's hash.
func (s *Service) issuePair(ctx context.Context, tx bun.Tx, uid, family uuid.UUID) (TokenPair, error) {
	access, _, err := s.tokens.IssueAccess(uid, nil, &family)
	if err != nil {
		return TokenPair{}, err
	}
	refresh, exp, err := s.tokens.Issue(uid, TypeRefresh, nil)
	if err != nil {
		return TokenPair{}, err
	}
	rt := store.RefreshToken{TokenHash: HashToken(refresh), UserID: uid, ExpiresAt: exp, FamilyID: family}
	if _, err := tx.NewInsert().Model(&rt).Exec(ctx); err != nil {
		return TokenPair{}, fmt.Errorf("store refresh token: %w", err)
	}
	return TokenPair{AccessToken: access, RefreshToken: refresh, ExpiresIn: s.tokens.AccessTTL()}, nil
}

func revokeRefreshTokens(ctx context.Context, tx bun.IDB, uid uuid.UUID) error {
	_, err := tx.NewUpdate().Table("refresh_tokens").Set("revoked = true").Where("user_id = ? AND NOT revoked", uid).Exec(ctx)
	return err
}

// wrap adds context to unexpected errors and translates store errors, leaving the
// package's sentinels recognisable with errors.Is.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, store.Translate(err))
}
