package auth

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/revoke"
	"github.com/taskweave/taskweave/store"
)

// endSessions ends every login session of user on tx: every refresh token is revoked
// (so every family, and the access tokens that carry one, is dead), tokens_not_before
// moves to now (so access tokens without a family die too), and a revocation notice
// has every API replica check the user's live STOMP sessions again, which then close
// (docs/api-conventions.md#authentication). Personal access tokens and project API
// keys are no login session and stay valid.
//
// The user row is written first: a concurrent rotation (Refresh share-locks it) either
// commits before, and its new refresh token is revoked here, or waits and then finds
// its token revoked.
func (s *Service) endSessions(ctx context.Context, tx bun.IDB, user uuid.UUID) error {
	if _, err := tx.NewUpdate().Table("users").Set("tokens_not_before = greatest(tokens_not_before, ?)", s.now()).
		Where("id = ?", user).Exec(ctx); err != nil {
		return err
	}
	if err := revokeRefreshTokens(ctx, tx, user); err != nil {
		return err
	}
	return revoke.Users(ctx, tx, user)
}

// SignOutEverywhere ends every login session of user (endSessions) and records
// SESSIONS_REVOKED: the admin's "sign out everywhere" for a user, and a user's own.
// Unknown and deleted users are ErrUserNotFound.
func (s *Service) SignOutEverywhere(ctx context.Context, actor *Principal, user uuid.UUID, meta Meta) error {
	return wrap("sign out everywhere", store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var email string
		err := tx.NewSelect().Table("users").Column("email").Where("id = ? AND deleted_at IS NULL", user).For("UPDATE").Scan(ctx, &email)
		if store.IsNotFound(err) {
			return ErrUserNotFound
		}
		if err != nil {
			return err
		}
		if err := s.endSessions(ctx, tx, user); err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, audit.Entry{Action: audit.SessionsRevoked, UserID: &actor.UserID, UserEmail: actor.Email,
			ResourceType: "USER", ResourceID: user.String(), IPAddress: meta.IP, UserAgent: meta.UserAgent})
	}))
}
