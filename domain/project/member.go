package project

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/automation/creator"
	"github.com/taskweave/taskweave/domain/revoke"
	"github.com/taskweave/taskweave/store"
)

// Audit actions of membership changes (ROLE_CHANGED is audit.RoleChanged, SECURITY).
const (
	ActionMemberAdded   = "MEMBER_ADDED"
	ActionMemberRemoved = "MEMBER_REMOVED"
)

// MemberView is an explicit member with its user.
type MemberView struct {
	User store.User
	Role Role
}

type memberRow struct {
	store.User `bun:",extend"`
	MemberRole string `bun:"member_role"`
}

// Members lists the explicit members, the owner first (as ADMIN, with or without a
// member row), then by join time, in one query.
func Members(ctx context.Context, db bun.IDB, p *store.Project) ([]MemberView, error) {
	var rows []memberRow
	err := db.NewRaw(`
		SELECT u.*, CASE WHEN u.id = ? THEN 'ADMIN' ELSE pm.role END AS member_role
		FROM users AS u
		LEFT JOIN project_members AS pm ON pm.project_id = ? AND pm.user_id = u.id
		WHERE u.id IN (SELECT user_id FROM project_members WHERE project_id = ? UNION SELECT ?::uuid)
		ORDER BY u.id = ? DESC, pm.created_at, u.display_name, u.id`,
		p.OwnerID, p.ID, p.ID, p.OwnerID, p.OwnerID).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("list members of %s: %w", p.Key, err)
	}
	out := make([]MemberView, 0, len(rows))
	for _, r := range rows {
		out = append(out, MemberView{User: r.User, Role: Role(r.MemberRole)})
	}
	return out, nil
}

func memberDetails(userID uuid.UUID, role Role) string {
	raw, _ := json.Marshal(map[string]string{"userId": userID.String(), "role": string(role)})
	return string(raw)
}

// liveUser reads a user who exists and is not deleted.
func liveUser(ctx context.Context, tx bun.IDB, id uuid.UUID) (*store.User, error) {
	var u store.User
	if err := tx.NewSelect().Model(&u).Where("id = ? AND deleted_at IS NULL", id).Scan(ctx); err != nil {
		if store.IsNotFound(err) {
			return nil, ErrUserNotFound
		}
		return nil, err
	}
	return &u, nil
}

// AddMember gives a user an explicit role in the project. The owner already counts as a
// member.
func (s *Service) AddMember(ctx context.Context, by audit.Actor, a *Access, userID uuid.UUID, role Role) (*MemberView, error) {
	var out MemberView
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		u, err := liveUser(ctx, tx, userID)
		if err != nil {
			return err
		}
		if userID == a.Project.OwnerID {
			return ErrAlreadyMember
		}
		m := store.ProjectMember{ProjectID: a.Project.ID, UserID: userID, Role: string(role)}
		res, err := tx.NewInsert().Model(&m).On("CONFLICT (project_id, user_id) DO NOTHING").Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrAlreadyMember
		}
		out = MemberView{User: *u, Role: role}
		return s.audit.Record(ctx, tx, entry(by, ActionMemberAdded, a.Project.ID, "USER", userID.String(), memberDetails(userID, role)))
	})
	if err != nil {
		return nil, fmt.Errorf("add member to %s: %w", a.Project.Key, err)
	}
	return &out, nil
}

// ChangeRole changes an explicit member's role. Nobody changes their own role, and the
// owner stays ADMIN.
func (s *Service) ChangeRole(ctx context.Context, by audit.Actor, a *Access, userID uuid.UUID, role Role) (*MemberView, error) {
	if userID == by.UserID {
		return nil, ErrOwnRole
	}
	if userID == a.Project.OwnerID {
		return nil, ErrOwnerProtected
	}
	var out MemberView
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*store.ProjectMember)(nil)).Set("role = ?", string(role)).
			Where("project_id = ? AND user_id = ?", a.Project.ID, userID).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrMemberNotFound
		}
		if err := tx.NewSelect().Model(&out.User).Where("id = ?", userID).Scan(ctx); err != nil {
			return err
		}
		out.Role = role
		// Below MEMBER, the user's rules of the project stop acting (docs/automation.md#creator-checks).
		if err := creator.UserChanged(ctx, tx, s.audit, by, userID); err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, entry(by, audit.RoleChanged, a.Project.ID, "USER", userID.String(), memberDetails(userID, role)))
	})
	if err != nil {
		return nil, fmt.Errorf("change role in %s: %w", a.Project.Key, err)
	}
	return &out, nil
}

// RemoveMember deletes an explicit membership; the owner cannot be removed.
func (s *Service) RemoveMember(ctx context.Context, by audit.Actor, a *Access, userID uuid.UUID) error {
	if userID == a.Project.OwnerID {
		return ErrOwnerProtected
	}
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var role string
		err := tx.NewDelete().Model((*store.ProjectMember)(nil)).
			Where("project_id = ? AND user_id = ?", a.Project.ID, userID).Returning("role").Scan(ctx, &role)
		if err != nil {
			if store.IsNotFound(err) {
				return ErrMemberNotFound
			}
			return err
		}
		// Live board subscriptions of the removed member end on every replica.
		if err := revoke.Users(ctx, tx, userID); err != nil {
			return err
		}
		// So do the member's automation rules of the project (docs/automation.md#creator-checks).
		if err := creator.UserChanged(ctx, tx, s.audit, by, userID); err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, entry(by, ActionMemberRemoved, a.Project.ID, "USER", userID.String(), memberDetails(userID, Role(role))))
	})
	if err != nil {
		return fmt.Errorf("remove member from %s: %w", a.Project.Key, err)
	}
	return nil
}
