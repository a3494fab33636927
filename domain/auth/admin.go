package auth

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/automation/creator"
	"github.com/taskweave/taskweave/domain/revoke"
	"github.com/taskweave/taskweave/store"
)

// Serializes every change that can remove an active admin, so two admins deactivating
// each other at once cannot leave the instance without one.
const adminsLock = "taskweave.active-admins"

// ListUsers returns every user that is not soft-deleted, oldest first.
func (s *Service) ListUsers(ctx context.Context) ([]store.User, error) {
	users := []store.User{}
	err := s.db.NewSelect().Model(&users).Where("deleted_at IS NULL").Order("created_at", "id").Scan(ctx)
	return users, wrap("list users", err)
}

// Deactivate blocks a user's logins and revokes every credential it holds.
func (s *Service) Deactivate(ctx context.Context, actor *Principal, id uuid.UUID, meta Meta) error {
	return s.retire(ctx, actor, id, false, meta)
}

// Delete soft-deletes and anonymizes a user (admin DELETE and DELETE /me).
func (s *Service) Delete(ctx context.Context, actor *Principal, id uuid.UUID, meta Meta) error {
	return s.retire(ctx, actor, id, true, meta)
}

// retire deactivates or deletes. The change is written first and the last-admin rule
// checked afterwards in the same transaction: a refusal rolls the change, its revocations
// and its audit job back together.
func (s *Service) retire(ctx context.Context, actor *Principal, id uuid.UUID, anonymize bool, meta Meta) error {
	return wrap("retire user", store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", adminsLock); err != nil {
			return err
		}
		var u store.User
		if err := tx.NewSelect().Model(&u).Where("id = ? AND deleted_at IS NULL", id).For("UPDATE").Scan(ctx); err != nil {
			if store.IsNotFound(err) {
				return ErrUserNotFound
			}
			return err
		}
		now := s.now()
		q := tx.NewUpdate().Table("users").Where("id = ?", id).
			Set("active = false, tokens_not_before = ?, updated_at = now()", now)
		action := audit.UserDeactivated
		if anonymize {
			action = audit.UserDeleted
			q = q.Set("email = ?, display_name = 'Deleted user', password_hash = NULL, oauth_provider = NULL, "+
				"oauth_subject = NULL, avatar_url = NULL, deleted_at = ?", "deleted-"+id.String()+"@deleted.invalid", now)
		}
		if _, err := q.Exec(ctx); err != nil {
			return err
		}
		if anonymize { // the external identities go with the e-mail
			if _, err := tx.NewDelete().Table("sso_identities").Where("user_id = ?", id).Exec(ctx); err != nil {
				return err
			}
		}
		if err := revokeRefreshTokens(ctx, tx, id); err != nil {
			return err
		}
		// The user's live sessions close on every replica.
		if err := revoke.Users(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Table("personal_access_tokens").Set("revoked_at = ?", now).
			Where("user_id = ? AND revoked_at IS NULL", id).Exec(ctx); err != nil {
			return err
		}
		if err := s.audit.Record(ctx, tx, audit.Entry{Action: action, UserID: &actor.UserID, UserEmail: actor.Email,
			ResourceType: "USER", ResourceID: id.String(), IPAddress: meta.IP, UserAgent: meta.UserAgent}); err != nil {
			return err
		}
		// The user's automation rules stop acting with them (docs/automation.md#creator-checks).
		if err := creator.UserChanged(ctx, tx, s.audit, audit.Actor{UserID: actor.UserID, Email: actor.Email, IP: meta.IP,
			UserAgent: meta.UserAgent}, id); err != nil {
			return err
		}
		if u.SystemRole != RoleAdmin || !u.Active {
			return nil
		}
		remaining, err := tx.NewSelect().Table("users").
			Where("system_role = 'ADMIN' AND active AND deleted_at IS NULL").Count(ctx)
		if err != nil {
			return err
		}
		if remaining == 0 {
			return ErrLastAdmin
		}
		return nil
	}))
}

// Activate lets a deactivated user log in again. Tokens issued before the deactivation
// stay invalid.
func (s *Service) Activate(ctx context.Context, actor *Principal, id uuid.UUID, meta Meta) error {
	return wrap("activate user", store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var u store.User
		if err := tx.NewSelect().Model(&u).Where("id = ?", id).For("UPDATE").Scan(ctx); err != nil {
			if store.IsNotFound(err) {
				return ErrUserNotFound
			}
			return err
		}
		if u.DeletedAt != nil {
			return ErrUserDeleted
		}
		if _, err := tx.NewUpdate().Table("users").Set("active = true, updated_at = now()").Where("id = ?", id).Exec(ctx); err != nil {
			return fmt.Errorf("activate: %w", err)
		}
		return s.audit.Record(ctx, tx, audit.Entry{Action: audit.UserActivated, UserID: &actor.UserID, UserEmail: actor.Email,
			ResourceType: "USER", ResourceID: id.String(), IPAddress: meta.IP, UserAgent: meta.UserAgent})
	}))
}
