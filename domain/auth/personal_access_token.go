package auth

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/store"
)

// NewToken is a validated POST /me/tokens.
type NewToken struct {
	Name      string
	Scope     string
	ExpiresAt *time.Time
}

// CreatePAT issues a personal access token; the plaintext is returned only here.
func (s *Service) CreatePAT(ctx context.Context, p *Principal, in NewToken, meta Meta) (*store.PersonalAccessToken, string, error) {
	plain, err := NewPAT()
	if err != nil {
		return nil, "", err
	}
	t := &store.PersonalAccessToken{UserID: p.UserID, Name: in.Name, TokenHash: HashToken(plain), TokenPrefix: Prefix(plain),
		Scope: in.Scope, ExpiresAt: in.ExpiresAt}
	err = store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(t).Returning("*").Exec(ctx); err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, audit.Entry{Action: audit.TokenCreated, UserID: &p.UserID, UserEmail: p.Email,
			ResourceType: "TOKEN", ResourceID: t.ID.String(), IPAddress: meta.IP, UserAgent: meta.UserAgent})
	})
	if err != nil {
		return nil, "", wrap("create token", err)
	}
	return t, plain, nil
}

// ListPATs lists the caller's tokens that are not revoked, oldest first.
func (s *Service) ListPATs(ctx context.Context, p *Principal) ([]store.PersonalAccessToken, error) {
	out := []store.PersonalAccessToken{}
	err := s.db.NewSelect().Model(&out).Where("user_id = ? AND revoked_at IS NULL", p.UserID).Order("created_at", "id").Scan(ctx)
	return out, wrap("list tokens", err)
}

// RevokePAT revokes one of the caller's tokens; another user's token is not found.
func (s *Service) RevokePAT(ctx context.Context, p *Principal, id uuid.UUID, meta Meta) error {
	return wrap("revoke token", store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Table("personal_access_tokens").Set("revoked_at = ?", s.now()).
			Where("id = ? AND user_id = ? AND revoked_at IS NULL", id, p.UserID).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrTokenNotFound
		}
		return s.audit.Record(ctx, tx, audit.Entry{Action: audit.TokenRevoked, UserID: &p.UserID, UserEmail: p.Email,
			ResourceType: "TOKEN", ResourceID: id.String(), IPAddress: meta.IP, UserAgent: meta.UserAgent})
	}))
}
