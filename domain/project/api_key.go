package project

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/store"
)

// NewAPIKey is a validated create request.
type NewAPIKey struct {
	Name      string
	ExpiresAt *time.Time
}

// APIKeys lists a project's keys, oldest first; plaintexts are never kept.
func APIKeys(ctx context.Context, db bun.IDB, projectID uuid.UUID) ([]store.ProjectAPIKey, error) {
	out := []store.ProjectAPIKey{}
	err := db.NewSelect().Model(&out).Where("project_id = ?", projectID).Order("created_at", "id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list API keys: %w", err)
	}
	return out, nil
}

// CreateAPIKey issues a key that acts with the actor's rights inside the project. Only
// the hash and a 12-character prefix are stored; the plaintext is returned only here.
func (s *Service) CreateAPIKey(ctx context.Context, by audit.Actor, a *Access, in NewAPIKey) (*store.ProjectAPIKey, string, error) {
	plain, err := auth.NewAPIKey()
	if err != nil {
		return nil, "", err
	}
	projectID := a.Project.ID
	k := &store.ProjectAPIKey{Name: in.Name, KeyHash: auth.HashToken(plain), KeyPrefix: auth.Prefix(plain),
		ProjectID: &projectID, CreatedBy: by.UserID, ExpiresAt: in.ExpiresAt}
	err = store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(k).Returning("*").Exec(ctx); err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, entry(by, audit.APIKeyCreated, projectID, "API_KEY", k.ID.String(), ""))
	})
	if err != nil {
		return nil, "", fmt.Errorf("create API key in %s: %w", a.Project.Key, err)
	}
	return k, plain, nil
}

// DeleteAPIKey revokes a key of the project; a key of another project is not found.
func (s *Service) DeleteAPIKey(ctx context.Context, by audit.Actor, a *Access, keyID uuid.UUID) error {
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewDelete().Model((*store.ProjectAPIKey)(nil)).Where("id = ? AND project_id = ?", keyID, a.Project.ID).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrAPIKeyNotFound
		}
		return s.audit.Record(ctx, tx, entry(by, audit.APIKeyDeleted, a.Project.ID, "API_KEY", keyID.String(), ""))
	})
	if err != nil {
		return fmt.Errorf("delete API key in %s: %w", a.Project.Key, err)
	}
	return nil
}
