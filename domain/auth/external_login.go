package auth

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// IssuePairTx signs in a user who authenticated elsewhere (single sign-on) inside the
// caller's transaction: the same token pair as a password login, its refresh token
// stored with the caller's other rows. The caller has checked that the user is active.
func (s *Service) IssuePairTx(ctx context.Context, tx bun.Tx, uid uuid.UUID) (TokenPair, error) {
	return s.issuePair(ctx, tx, uid, uuid.New())
}
