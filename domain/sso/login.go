package sso

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/weblink"
	"github.com/taskweave/taskweave/store"
)

// CodeTTL is how long the one-time code of a finished login can be exchanged.
const CodeTTL = 60 * time.Second

// Start is a begun login: send the browser to RedirectURL and keep Binding in a cookie
// the callback reads back, so a callback only completes in the browser that began it
// (a link with someone else's code and state cannot sign a victim in).
type Start struct {
	RedirectURL string
	Binding     string
}

// Begin starts a login with registration: a fresh signed state, PKCE and nonce. The
// registration is resolved from Postgres now, so a config created or changed on any
// replica applies to this request.
func (s *Service) Begin(ctx context.Context, registration string) (Start, error) {
	p, err := s.resolve(ctx, registration)
	if err != nil {
		return Start{}, err
	}
	state, f, err := s.state.issue(p.id, uuid.Nil, s.now())
	if err != nil {
		return Start{}, err
	}
	return Start{RedirectURL: s.authCodeURL(p, state, f), Binding: f.ID}, nil
}

// Result is how a callback ended: a login's one-time code, or the registration a link
// flow linked to the signed-in account.
type Result struct {
	Code   string
	Linked string
}

// Callback is what the provider sent back to /login/oauth2/code/{registration}.
type Callback struct {
	Code  string
	State string
	// Error is the provider's error parameter (access_denied when the user declined).
	Error string
	// Binding is the state cookie's value.
	Binding string
}

// Finish completes a flow: checks the state and uses it up, redeems the code, then
// either links the identity to the account a link flow began for (Result.Linked), or
// finds or creates the local user and stores a one-time code for the web client
// (Result.Code). Every refusal is a *FlowError.
func (s *Service) Finish(ctx context.Context, registration string, cb Callback, meta auth.Meta) (Result, error) {
	f, err := s.state.check(cb.State, s.now())
	if err != nil {
		return Result{}, flowError(ReasonInvalidState, err)
	}
	if f.Registration != registration || cb.Binding == "" || cb.Binding != f.ID {
		return Result{}, flowError(ReasonInvalidState, errors.New("state belongs to another flow or browser"))
	}
	if err := s.useState(ctx, f); err != nil {
		return Result{}, err
	}
	if cb.Error != "" {
		if cb.Error == "access_denied" {
			return Result{}, flowError(ReasonAccessDenied, nil)
		}
		return Result{}, flowError(ReasonProviderError, fmt.Errorf("provider error %q", cb.Error))
	}
	if cb.Code == "" {
		return Result{}, flowError(ReasonProviderError, errors.New("no code in the callback"))
	}
	p, err := s.resolve(ctx, registration)
	if err != nil {
		return Result{}, err
	}
	who, err := s.identify(ctx, p, cb.Code, f)
	if err != nil {
		return Result{}, err
	}
	if f.Link != uuid.Nil {
		if err := s.finishLink(ctx, p, who, f, meta); err != nil {
			return Result{}, err
		}
		return Result{Linked: p.id}, nil
	}
	code, err := s.finishLogin(ctx, p, who, meta)
	if err != nil {
		return Result{}, err
	}
	return Result{Code: code}, nil
}

// useState records the flow id, so a second callback with the same state is
// INVALID_STATE on every replica. Used ids past their state's expiry are swept by the
// same statement.
func (s *Service) useState(ctx context.Context, f flow) error {
	res, err := s.db.ExecContext(ctx, `WITH swept AS (DELETE FROM sso_used_states WHERE expires_at < now())
		INSERT INTO sso_used_states (flow_id, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, f.ID, f.Expires)
	if err != nil {
		return wrap("use sso state", store.Translate(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return flowError(ReasonInvalidState, errors.New("state already used"))
	}
	return nil
}

// finishLogin finds or creates the local user of a verified identity and stores the
// one-time code the web client exchanges, which it returns.
func (s *Service) finishLogin(ctx context.Context, p *provider, who identity, meta auth.Meta) (string, error) {
	code, err := newLoginCode()
	if err != nil {
		return "", err
	}
	var refused *FlowError
	var refusedUser *store.User
	link := func(ctx context.Context, tx bun.Tx) error {
		u, err := s.localUser(ctx, tx, p, who, meta)
		if errors.As(err, &refused) {
			refusedUser = u
			return nil // recorded below, in a transaction of its own
		}
		if err != nil {
			return err
		}
		// Expired codes are swept here, by the index on expires_at, rather than by a job.
		if _, err := tx.NewDelete().Table("sso_login_codes").Where("expires_at < now()").Exec(ctx); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO sso_login_codes (code_hash, user_id, provider, expires_at)
			VALUES (?, ?, ?, now() + make_interval(secs => ?))`, auth.HashToken(code), u.ID, p.id, CodeTTL.Seconds())
		return err
	}
	err = store.InTx(ctx, s.db, link)
	var dup *store.ConstraintError
	if errors.As(store.Translate(err), &dup) && dup.Kind == "unique" {
		// Two first logins of one new identity (two tabs, a double click) raced to
		// provision it: the other committed the account, which this second try finds.
		refused, refusedUser = nil, nil
		err = store.InTx(ctx, s.db, link)
	}
	if err != nil {
		return "", wrap("finish sso login", store.Translate(err))
	}
	if refused != nil {
		return "", s.recordRefusal(ctx, p, who, refusedUser, refused, meta)
	}
	return code, nil
}

// localUser finds the user for an external identity: by its linked identity, else by
// a verified e-mail when the registration may link that account automatically (its
// allowedDomains name the e-mail's domain, and the account is no system ADMIN), else a
// new account in the default organization when the registration provisions. Any other
// account with that e-mail is ACCOUNT_EXISTS: its owner signs in with the password and
// links the provider from the account. A refusal of a known user returns that user
// with the *FlowError.
func (s *Service) localUser(ctx context.Context, tx bun.Tx, p *provider, who identity, meta auth.Meta) (*store.User, error) {
	var u store.User
	err := tx.NewSelect().Model(&u).
		Where("id = (SELECT user_id FROM sso_identities WHERE provider = ? AND subject = ?)", p.id, who.Subject).
		For("UPDATE").Scan(ctx)
	if err == nil {
		return &u, usable(&u)
	}
	if !store.IsNotFound(err) {
		return nil, err
	}
	email := strings.ToLower(strings.TrimSpace(who.Email))
	if email == "" || !who.EmailVerified {
		return nil, flowError(ReasonEmailNotVerified, nil)
	}
	err = tx.NewSelect().Model(&u).Where("email = ?", email).For("UPDATE").Scan(ctx)
	if err == nil {
		if err := usable(&u); err != nil {
			return &u, err
		}
		if u.SystemRole == auth.RoleAdmin || !p.trusts(email) {
			return &u, flowError(ReasonAccountExists, nil)
		}
		linked, err := s.linkIdentity(ctx, tx, u.ID, p.id, who.Subject, "allowedDomains", meta)
		if err != nil {
			return nil, err
		}
		if !linked { // linked to this registration under another subject already
			return &u, flowError(ReasonAccountExists, nil)
		}
		return &u, nil
	}
	if !store.IsNotFound(err) {
		return nil, err
	}
	if !p.autoProvision {
		return nil, flowError(ReasonProvisioningDisabled, nil)
	}
	return s.provision(ctx, tx, p, who, email, meta)
}

// usable refuses deactivated and deleted accounts.
func usable(u *store.User) error {
	if !u.Active || u.DeletedAt != nil {
		return flowError(ReasonAccountDisabled, nil)
	}
	return nil
}

// provision creates a MEMBER account without a password, linked to the identity, in
// the default organization as MEMBER, and records USER_REGISTERED.
func (s *Service) provision(ctx context.Context, tx bun.Tx, p *provider, who identity, email string, meta auth.Meta) (*store.User, error) {
	u := store.User{Email: email, DisplayName: displayName(who, email), SystemRole: auth.RoleMember, Active: true}
	var org uuid.UUID
	err := tx.NewSelect().Table("organizations").Column("id").Where("slug = 'default'").Scan(ctx, &org)
	switch {
	case err == nil:
		u.OrgID = &org
	case !store.IsNotFound(err):
		return nil, err
	}
	if utf8.RuneCountInString(who.Picture) <= 512 && weblink.Valid(who.Picture) {
		u.AvatarURL = &who.Picture
	}
	if _, err := tx.NewInsert().Model(&u).Returning("*").Exec(ctx); err != nil {
		return nil, err
	}
	if _, err := tx.NewInsert().Model(&store.SSOIdentity{Provider: p.id, Subject: who.Subject, UserID: u.ID}).Exec(ctx); err != nil {
		return nil, err
	}
	if u.OrgID != nil {
		if _, err := tx.ExecContext(ctx, "INSERT INTO organization_members (org_id, user_id, role) VALUES (?, ?, 'MEMBER') ON CONFLICT DO NOTHING",
			*u.OrgID, u.ID); err != nil {
			return nil, err
		}
	}
	return &u, s.audit.Record(ctx, tx, audit.Entry{Action: audit.UserRegistered, UserID: &u.ID, UserEmail: u.Email,
		ResourceType: "USER", ResourceID: u.ID.String(), Details: details(p.id, ""), IPAddress: meta.IP, UserAgent: meta.UserAgent})
}

// displayName is the provider's name for the user, else the e-mail's local part.
func displayName(who identity, email string) string {
	name := strings.TrimSpace(who.Name)
	if name == "" {
		name, _, _ = strings.Cut(email, "@")
	}
	if utf8.RuneCountInString(name) > 255 {
		name = string([]rune(name)[:255])
	}
	return name
}

// recordRefusal audits a refused login of a known identity as LOGIN_FAILED, then
// returns the refusal.
func (s *Service) recordRefusal(ctx context.Context, p *provider, who identity, u *store.User, refused *FlowError, meta auth.Meta) error {
	e := audit.Entry{Action: audit.LoginFailed, UserEmail: strings.ToLower(who.Email), ResourceType: "USER",
		Details: details(p.id, refused.Reason), IPAddress: meta.IP, UserAgent: meta.UserAgent}
	if u != nil {
		e.UserID, e.UserEmail, e.ResourceID = &u.ID, u.Email, u.ID.String()
	}
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error { return s.audit.Record(ctx, tx, e) })
	if err != nil {
		return wrap("record refused sso login", err)
	}
	return refused
}

// details is the audit rows' JSON: the registration id and, for refusals, the reason.
func details(provider, reason string) string {
	m := map[string]string{"provider": provider}
	if reason != "" {
		m["reason"] = reason
	}
	raw, _ := json.Marshal(m)
	return string(raw)
}

// newLoginCode is 32 random bytes, URL-safe base64.
func newLoginCode() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("login code: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ResultURL is where a flow ends in the web client: {base}/auth/sso/callback with a
// login's one-time code, with linked=<registration id> after a link, or with
// error=<reason>.
func (s *Service) ResultURL(r Result, err error) string {
	v := url.Values{}
	switch {
	case err != nil:
		v.Set("error", ReasonOf(err))
	case r.Linked != "":
		v.Set("linked", r.Linked)
	default:
		v.Set("code", r.Code)
	}
	return s.opts.BaseURL + "/auth/sso/callback?" + v.Encode()
}

// Exchange trades a one-time code for the login token pair and records OAUTH_LOGIN.
// The code is deleted by the statement that checks it, so it works once even when two
// requests race; an expired, used or unknown code, or one whose user has since been
// deactivated, is ErrInvalidCode.
func (s *Service) Exchange(ctx context.Context, code string, meta auth.Meta) (auth.TokenPair, error) {
	var row struct {
		UserID   string `bun:"user_id"`
		Provider string `bun:"provider"`
	}
	err := s.db.NewRaw("DELETE FROM sso_login_codes WHERE code_hash = ? AND expires_at > now() RETURNING user_id, provider",
		auth.HashToken(code)).Scan(ctx, &row)
	if err != nil {
		if store.IsNotFound(err) {
			return auth.TokenPair{}, ErrInvalidCode
		}
		return auth.TokenPair{}, wrap("exchange sso code", store.Translate(err))
	}
	var pair auth.TokenPair
	err = store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var u store.User
		if err := tx.NewSelect().Model(&u).Where("id = ?", row.UserID).Scan(ctx); err != nil {
			return err
		}
		if !u.Active || u.DeletedAt != nil {
			return ErrInvalidCode
		}
		var err error
		if pair, err = s.auth.IssuePairTx(ctx, tx, u.ID); err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, audit.Entry{Action: audit.OAuthLogin, UserID: &u.ID, UserEmail: u.Email,
			ResourceType: "USER", ResourceID: u.ID.String(), Details: details(row.Provider, ""), IPAddress: meta.IP, UserAgent: meta.UserAgent})
	})
	if err != nil {
		if errors.Is(err, ErrInvalidCode) {
			return auth.TokenPair{}, ErrInvalidCode
		}
		return auth.TokenPair{}, wrap("exchange sso code", store.Translate(err))
	}
	return pair, nil
}
