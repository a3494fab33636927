package organization

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/revoke"
	"github.com/taskweave/taskweave/store"
)

// MemberView is a member with its user.
type MemberView struct {
	User store.User
	Role Role
}

type memberRow struct {
	store.User `bun:",extend"`
	MemberRole string `bun:"member_role"`
}

// Members lists an organization's members, owners first, then by join time, in one
// query. The caller must belong to it or be a system ADMIN.
func Members(ctx context.Context, db bun.IDB, id uuid.UUID, p *auth.Principal) ([]MemberView, error) {
	a, err := Load(ctx, db, id, p)
	if err != nil {
		return nil, err
	}
	if !a.Visible() {
		return nil, ErrNotMember
	}
	var rows []memberRow
	err = db.NewSelect().Model(&rows).
		ColumnExpr("u.*").
		ColumnExpr("om.role AS member_role").
		ModelTableExpr("organization_members AS om").
		Join("JOIN users AS u ON u.id = om.user_id").
		Where("om.org_id = ?", id).
		OrderExpr("om.role = 'OWNER' DESC, om.created_at, u.display_name, u.id").
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list members of organization %s: %w", id, err)
	}
	out := make([]MemberView, 0, len(rows))
	for _, r := range rows {
		out = append(out, MemberView{User: r.User, Role: Role(r.MemberRole)})
	}
	return out, nil
}

// manage runs fn in a transaction holding the organization's row lock, so concurrent
// member changes cannot both remove "the other" last owner. The caller must be an
// OWNER or ADMIN of the organization or a system ADMIN.
func manage(ctx context.Context, db bun.IDB, id uuid.UUID, p *auth.Principal, fn func(ctx context.Context, tx bun.Tx, a *Access) error) error {
	return store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw("SELECT id FROM organizations WHERE id = ? FOR UPDATE", id).Exec(ctx); err != nil {
			return err
		}
		a, err := Load(ctx, tx, id, p)
		if err != nil {
			return err
		}
		if !a.Manages() {
			return ErrAdminOnly
		}
		return fn(ctx, tx, a)
	})
}

// mayGrantOwner: only an OWNER or a system ADMIN makes someone an OWNER.
func (a *Access) mayGrantOwner() bool { return a.Role == Owner || a.SystemAdmin }

// AddMember adds a user (not deleted) with a role.
func AddMember(ctx context.Context, db bun.IDB, id uuid.UUID, p *auth.Principal, userID uuid.UUID, role Role) (*MemberView, error) {
	var out MemberView
	err := manage(ctx, db, id, p, func(ctx context.Context, tx bun.Tx, a *Access) error {
		if role == Owner && !a.mayGrantOwner() {
			return ErrOwnerRule
		}
		if err := tx.NewSelect().Model(&out.User).Where("id = ? AND deleted_at IS NULL", userID).Scan(ctx); err != nil {
			if store.IsNotFound(err) {
				return ErrUserNotFound
			}
			return err
		}
		m := store.OrganizationMember{OrgID: id, UserID: userID, Role: string(role)}
		res, err := tx.NewInsert().Model(&m).On("CONFLICT DO NOTHING").Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrAlreadyMember
		}
		out.Role = role
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("add member to organization %s: %w", id, err)
	}
	return &out, nil
}

// target is a member about to be changed or removed, with the owner rules applied:
// an OWNER is changed only by a system ADMIN, and never when it is the last one.
func target(ctx context.Context, tx bun.Tx, a *Access, userID uuid.UUID, demoting bool) (*store.OrganizationMember, error) {
	var m store.OrganizationMember
	if err := tx.NewSelect().Model(&m).Where("org_id = ? AND user_id = ?", a.Org.ID, userID).Scan(ctx); err != nil {
		if store.IsNotFound(err) {
			return nil, ErrMemberNotFound
		}
		return nil, err
	}
	if Role(m.Role) != Owner || !demoting {
		return &m, nil
	}
	if !a.SystemAdmin {
		return nil, ErrOwnerRule
	}
	owners, err := tx.NewSelect().Model((*store.OrganizationMember)(nil)).
		Where("org_id = ? AND role = ?", a.Org.ID, string(Owner)).Count(ctx)
	if err != nil {
		return nil, err
	}
	if owners <= 1 {
		return nil, ErrLastOwner
	}
	return &m, nil
}

// ChangeRole gives a member another role. Nobody changes their own role.
func ChangeRole(ctx context.Context, db bun.IDB, id uuid.UUID, p *auth.Principal, userID uuid.UUID, role Role) (*MemberView, error) {
	var out MemberView
	err := manage(ctx, db, id, p, func(ctx context.Context, tx bun.Tx, a *Access) error {
		if userID == p.UserID {
			return ErrOwnRole
		}
		if role == Owner && !a.mayGrantOwner() {
			return ErrOwnerRule
		}
		if _, err := target(ctx, tx, a, userID, role != Owner); err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model((*store.OrganizationMember)(nil)).Set("role = ?", string(role)).
			Where("org_id = ? AND user_id = ?", id, userID).Exec(ctx); err != nil {
			return err
		}
		out.Role = role
		return tx.NewSelect().Model(&out.User).Where("id = ?", userID).Scan(ctx)
	})
	if err != nil {
		return nil, fmt.Errorf("change role in organization %s: %w", id, err)
	}
	return &out, nil
}

// RemoveMember removes a member.
func RemoveMember(ctx context.Context, db bun.IDB, id uuid.UUID, p *auth.Principal, userID uuid.UUID) error {
	err := manage(ctx, db, id, p, func(ctx context.Context, tx bun.Tx, a *Access) error {
		if _, err := target(ctx, tx, a, userID, true); err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model((*store.OrganizationMember)(nil)).Where("org_id = ? AND user_id = ?", id, userID).Exec(ctx); err != nil {
			return err
		}
		// Boards the member followed by inheritance stop on every replica.
		return revoke.Users(ctx, tx, userID)
	})
	if err != nil {
		return fmt.Errorf("remove member from organization %s: %w", id, err)
	}
	return nil
}
