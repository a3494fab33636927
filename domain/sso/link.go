package sso

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/store"
)

// BeginLink starts a link flow for the signed-in caller: like a login, but the state
// names the caller, so the callback links the identity the provider returns to this
// account instead of signing anyone in. A link is a new way into the account, so only a
// session (an access token) may begin one, never a personal access token, and an
// account with a password must confirm it (currentPassword): a stolen access token
// alone cannot add a login of the thief's.
func (s *Service) BeginLink(ctx context.Context, p auth.Principal, registration, currentPassword string) (Start, error) {
	if p.Method != auth.MethodJWT {
		return Start{}, ErrSessionRequired
	}
	prov, err := s.resolveForLink(ctx, registration)
	if err != nil {
		return Start{}, err
	}
	var u store.User
	if err := s.db.NewSelect().Model(&u).Column("id", "password_hash").Where("id = ?", p.UserID).Scan(ctx); err != nil {
		return Start{}, wrap("begin sso link", store.Translate(err))
	}
	if u.PasswordHash != nil {
		if ok, err := auth.VerifyPassword(*u.PasswordHash, currentPassword); err != nil || !ok {
			return Start{}, auth.ErrInvalidCurrentPassword
		}
	}
	state, f, err := s.state.issue(prov.id, p.UserID, s.now())
	if err != nil {
		return Start{}, err
	}
	return Start{RedirectURL: s.authCodeURL(prov, state, f), Binding: f.ID}, nil
}

// resolveForLink resolves a registration for a link start, whose failures are API
// errors rather than flow reasons.
func (s *Service) resolveForLink(ctx context.Context, registration string) (*provider, error) {
	prov, err := s.resolve(ctx, registration)
	if err != nil {
		var fe *FlowError
		switch {
		case !errors.As(err, &fe):
			return nil, err
		case fe.Reason == ReasonUnknownProvider:
			return nil, ErrProviderNotFound
		default:
			return nil, fmt.Errorf("%w: %w", ErrProviderUnavailable, err)
		}
	}
	return prov, nil
}

// finishLink links the identity to the account the flow f began for. The account must
// still be active, and its sessions not revoked since the flow began (the
// tokens_not_before stamp access tokens are checked against); an identity linked to
// another account is IDENTITY_IN_USE; an identity of this registration the account had
// before is replaced.
func (s *Service) finishLink(ctx context.Context, p *provider, who identity, f flow, meta auth.Meta) error {
	uid := f.Link
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var u store.User
		if err := tx.NewSelect().Model(&u).Where("id = ?", uid).For("UPDATE").Scan(ctx); err != nil {
			if store.IsNotFound(err) {
				return flowError(ReasonAccountDisabled, nil)
			}
			return err
		}
		if err := usable(&u); err != nil {
			return err
		}
		if f.IssuedAt.Before(u.TokensNotBefore) {
			return flowError(ReasonInvalidState, errors.New("the session that began the link was revoked"))
		}
		var owner uuid.UUID
		err := tx.NewSelect().Table("sso_identities").Column("user_id").Where("provider = ? AND subject = ?", p.id, who.Subject).
			For("UPDATE").Scan(ctx, &owner)
		switch {
		case err == nil && owner == uid:
			return nil // linked already
		case err == nil:
			return flowError(ReasonIdentityInUse, nil)
		case !store.IsNotFound(err):
			return err
		}
		if _, err := tx.NewDelete().Table("sso_identities").Where("user_id = ? AND provider = ?", uid, p.id).Exec(ctx); err != nil {
			return err
		}
		_, err = s.linkIdentity(ctx, tx, uid, p.id, who.Subject, "account", meta)
		return err
	})
	var fe *FlowError
	if errors.As(err, &fe) {
		return fe
	}
	return wrap("link sso identity", store.Translate(err))
}

// linkIdentity links (provider, subject) to the account uid and records SSO_LINKED
// with how it happened; linked is false (and nothing written) when the account is
// linked to this registration already.
func (s *Service) linkIdentity(ctx context.Context, tx bun.Tx, uid uuid.UUID, provider, subject, how string, meta auth.Meta) (bool, error) {
	res, err := tx.NewInsert().Model(&store.SSOIdentity{Provider: provider, Subject: subject, UserID: uid}).
		On("CONFLICT (user_id, provider) DO NOTHING").Exec(ctx)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	var email string
	if err := tx.NewSelect().Table("users").Column("email").Where("id = ?", uid).Scan(ctx, &email); err != nil {
		return false, err
	}
	raw, _ := json.Marshal(map[string]string{"provider": provider, "by": how})
	return true, s.audit.Record(ctx, tx, audit.Entry{Action: audit.SSOLinked, UserID: &uid, UserEmail: email,
		ResourceType: "USER", ResourceID: uid.String(), Details: string(raw), IPAddress: meta.IP, UserAgent: meta.UserAgent})
}

// Link is one provider an account is linked to.
type Link struct {
	// Registration is the registration id: an SSO config id, github or google.
	Registration string
	// Name is the config's name (GitHub, Google for the built-ins); empty when the
	// config was deleted.
	Name     string
	LinkedAt time.Time
}

// Links lists the providers the account uid is linked to, oldest first.
func (s *Service) Links(ctx context.Context, uid uuid.UUID) ([]Link, error) {
	var rows []struct {
		Provider  string    `bun:"provider"`
		Name      *string   `bun:"name"`
		CreatedAt time.Time `bun:"created_at"`
	}
	err := s.db.NewRaw(`SELECT i.provider, c.name, i.created_at FROM sso_identities i
		LEFT JOIN sso_configs c ON c.id::text = i.provider WHERE i.user_id = ? ORDER BY i.created_at, i.provider`, uid).Scan(ctx, &rows)
	if err != nil && !store.IsNotFound(err) {
		return nil, wrap("list sso links", store.Translate(err))
	}
	out := make([]Link, 0, len(rows))
	for _, r := range rows {
		l := Link{Registration: r.Provider, LinkedAt: r.CreatedAt}
		switch {
		case r.Name != nil:
			l.Name = *r.Name
		case r.Provider == GitHubID:
			l.Name = "GitHub"
		case r.Provider == GoogleID:
			l.Name = "Google"
		}
		out = append(out, l)
	}
	return out, nil
}

// Unlink removes the caller's link to registration and records SSO_UNLINKED. The
// last link of an account without a password stays: it is the only way in.
func (s *Service) Unlink(ctx context.Context, p auth.Principal, registration string, meta auth.Meta) error {
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var u store.User
		if err := tx.NewSelect().Model(&u).Where("id = ?", p.UserID).For("UPDATE").Scan(ctx); err != nil {
			return err
		}
		links, err := tx.NewSelect().Table("sso_identities").Where("user_id = ?", p.UserID).Count(ctx)
		if err != nil {
			return err
		}
		res, err := tx.NewDelete().Table("sso_identities").Where("user_id = ? AND provider = ?", p.UserID, registration).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrLinkNotFound
		}
		if u.PasswordHash == nil && links == 1 {
			return ErrLastSignInMethod
		}
		raw, _ := json.Marshal(map[string]string{"provider": registration})
		return s.audit.Record(ctx, tx, audit.Entry{Action: audit.SSOUnlinked, UserID: &u.ID, UserEmail: u.Email,
			ResourceType: "USER", ResourceID: u.ID.String(), Details: string(raw), IPAddress: meta.IP, UserAgent: meta.UserAgent})
	})
	if errors.Is(err, ErrLinkNotFound) || errors.Is(err, ErrLastSignInMethod) {
		return err
	}
	return wrap("unlink sso identity", store.Translate(err))
}
