package auth

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/store"
)

// User loads one user, soft-deleted ones included.
func (s *Service) User(ctx context.Context, id uuid.UUID) (*store.User, error) {
	var u store.User
	if err := s.db.NewSelect().Model(&u).Where("id = ?", id).Scan(ctx); err != nil {
		if err = store.Translate(err); store.IsNotFound(err) {
			return nil, ErrUserNotFound
		}
		return nil, wrap("load user", err)
	}
	return &u, nil
}

// ProfileChange is a validated PATCH /me; nil members stay unchanged and an empty
// avatarUrl clears it.
type ProfileChange struct {
	DisplayName *string
	AvatarURL   *string
}

// UpdateProfile changes the caller's display name or avatar and records PROFILE_UPDATED.
func (s *Service) UpdateProfile(ctx context.Context, p *Principal, c ProfileChange, meta Meta) (*store.User, error) {
	var u store.User
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewUpdate().Model(&u).Set("updated_at = now()").Where("id = ?", p.UserID).Returning("*")
		if c.DisplayName != nil {
			q = q.Set("display_name = ?", strings.TrimSpace(*c.DisplayName))
		}
		if c.AvatarURL != nil {
			if *c.AvatarURL == "" {
				q = q.Set("avatar_url = NULL")
			} else {
				q = q.Set("avatar_url = ?", *c.AvatarURL)
			}
		}
		if _, err := q.Exec(ctx); err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, audit.Entry{Action: audit.ProfileUpdated, UserID: &p.UserID, UserEmail: p.Email,
			ResourceType: "USER", ResourceID: p.UserID.String(), IPAddress: meta.IP, UserAgent: meta.UserAgent})
	})
	return &u, wrap("update profile", err)
}

// ChangePassword re-hashes the caller's password and ends every login session of the
// caller (endSessions), the one it is called from included; personal access tokens stay
// valid.
func (s *Service) ChangePassword(ctx context.Context, p *Principal, current, next string, meta Meta) error {
	u, err := s.User(ctx, p.UserID)
	if err != nil {
		return err
	}
	if u.PasswordHash == nil {
		return ErrNoPassword
	}
	ok, err := VerifyPassword(*u.PasswordHash, current)
	if err != nil || !ok {
		return ErrInvalidCurrentPassword
	}
	hash, err := HashPassword(s.opts.Password, next)
	if err != nil {
		return err
	}
	return wrap("change password", store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewUpdate().Table("users").Set("password_hash = ?, updated_at = now()", hash).Where("id = ?", p.UserID).Exec(ctx); err != nil {
			return err
		}
		if err := s.endSessions(ctx, tx, p.UserID); err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, audit.Entry{Action: audit.PasswordChanged, UserID: &p.UserID, UserEmail: p.Email,
			ResourceType: "USER", ResourceID: p.UserID.String(), IPAddress: meta.IP, UserAgent: meta.UserAgent})
	}))
}

// SetLanguage stores the caller's language ("en" or "de", checked at the edge).
func (s *Service) SetLanguage(ctx context.Context, p *Principal, lang string) (*store.User, error) {
	var u store.User
	_, err := s.db.NewUpdate().Model(&u).Set("language = ?, updated_at = now()", lang).Where("id = ?", p.UserID).Returning("*").Exec(ctx)
	return &u, wrap("set language", err)
}
