// Package project owns projects, their members and the one authorization rule every
// project endpoint uses: the caller's effective project role.
package project

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/store"
)

// Role is a project role; None means no access at all.
type Role string

// Project roles from weakest to strongest.
const (
	None   Role = ""
	Viewer Role = "VIEWER"
	Member Role = "MEMBER"
	Admin  Role = "ADMIN"
)

var rank = map[Role]int{None: 0, Viewer: 1, Member: 2, Admin: 3}

// ParseRole validates a role name.
func ParseRole(s string) (Role, bool) {
	r := Role(s)
	_, ok := rank[r]
	return r, ok && r != None
}

// AtLeast reports whether r grants at least min.
func (r Role) AtLeast(min Role) bool { return rank[r] >= rank[min] }

// Errors of project access.
var (
	ErrNotFound  = errors.New("project: not found")
	ErrForbidden = errors.New("project: forbidden")
)

// Access is a project as one caller sees it.
type Access struct {
	Project store.Project
	// Role is the effective role: explicit membership (the owner is an implicit ADMIN)
	// raised by organization inheritance, never lowered.
	Role Role
	// MemberRole is the explicit role (ADMIN for the owner), None without a member row;
	// workflow role guards use it (NONE for non-members).
	MemberRole Role
}

// Require fails with ErrForbidden unless the effective role is at least min.
func (a *Access) Require(min Role) error {
	if !a.Role.AtLeast(min) {
		return fmt.Errorf("%w: role %q below %q", ErrForbidden, a.Role, min)
	}
	return nil
}

// inherited maps an organization role to the project role it grants.
func inherited(orgRole *string) Role {
	if orgRole == nil {
		return None
	}
	switch *orgRole {
	case "OWNER", "ADMIN":
		return Admin
	case "MEMBER":
		return Viewer
	}
	return None
}

// roleRow is a project with the caller's explicit and organization roles.
type roleRow struct {
	store.Project `bun:",extend"`
	MemberRole    *string `bun:"member_role"`
	OrgRole       *string `bun:"org_role"`
}

// selectWithRoles selects projects (alias project) with the caller's explicit role (ADMIN
// for the owner) and organization role; joins are unique per project, so rows never repeat.
func selectWithRoles(db bun.IDB, dst any, uid uuid.UUID) *bun.SelectQuery {
	return db.NewSelect().Model(dst).
		ColumnExpr("project.*").
		ColumnExpr("CASE WHEN project.owner_id = ? THEN 'ADMIN' ELSE pm.role END AS member_role", uid).
		ColumnExpr("om.role AS org_role").
		Join("LEFT JOIN project_members AS pm ON pm.project_id = project.id AND pm.user_id = ?", uid).
		Join("LEFT JOIN organization_members AS om ON om.org_id = project.org_id AND om.user_id = ?", uid)
}

// access computes the effective role: the explicit role raised by organization
// inheritance, never lowered.
func (r *roleRow) access() *Access {
	a := &Access{Project: r.Project}
	if r.MemberRole != nil {
		a.MemberRole = Role(*r.MemberRole)
	}
	a.Role = a.MemberRole
	if inh := inherited(r.OrgRole); !a.Role.AtLeast(inh) {
		a.Role = inh
	}
	return a
}

// userRow is a project with the caller's roles and the caller's user row (LoadWithUser).
type userRow struct {
	roleRow         `bun:",extend"`
	UserID          *uuid.UUID `bun:"u_id"`
	UserEmail       *string    `bun:"u_email"`
	UserDisplayName *string    `bun:"u_display_name"`
	UserSystemRole  *string    `bun:"u_system_role"`
	UserLanguage    *string    `bun:"u_language"`
	UserOrgID       *uuid.UUID `bun:"u_org_id"`
	UserActive      *bool      `bun:"u_active"`
	UserDeletedAt   *time.Time `bun:"u_deleted_at"`
	UserNotBefore   *time.Time `bun:"u_tokens_not_before"`
}

// LoadWithUser is Load for a caller whose credential is checked with the project, in
// the same statement: it also returns the caller's user row (nil when there is none),
// which the API checks as authentication would have (auth.AccessClaims.Principal).
// Unknown key → ErrNotFound, and no user row: the caller checks the credential alone.
func LoadWithUser(ctx context.Context, db bun.IDB, key string, userID uuid.UUID) (*Access, *store.User, error) {
	var row userRow
	cols := make([]string, len(auth.UserColumns))
	for i, c := range auth.UserColumns {
		cols[i] = "u." + c + " AS u_" + c
	}
	err := selectWithRoles(db, &row, userID).ColumnExpr(strings.Join(cols, ", ")).
		Join("LEFT JOIN users AS u ON u.id = ?", userID).
		Where("project.key = ?", key).Scan(ctx)
	if err != nil {
		if store.Translate(err) == store.ErrNotFound {
			return nil, nil, ErrNotFound
		}
		return nil, nil, fmt.Errorf("load project %s: %w", key, err)
	}
	var u *store.User
	if row.UserID != nil {
		u = &store.User{ID: *row.UserID, Email: deref(row.UserEmail), DisplayName: deref(row.UserDisplayName),
			SystemRole: deref(row.UserSystemRole), Language: row.UserLanguage, OrgID: row.UserOrgID,
			Active: row.UserActive != nil && *row.UserActive, DeletedAt: row.UserDeletedAt}
		if row.UserNotBefore != nil {
			u.TokensNotBefore = *row.UserNotBefore
		}
	}
	return row.access(), u, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Load resolves a project by key and the caller's effective role in one query.
// Unknown key → ErrNotFound; a caller without any role gets an Access with Role None
// (the caller decides: 403 for project endpoints).
func Load(ctx context.Context, db bun.IDB, key string, p *auth.Principal) (*Access, error) {
	uid := uuid.Nil
	if p != nil {
		uid = p.UserID
	}
	var row roleRow
	err := selectWithRoles(db, &row, uid).Where("project.key = ?", key).Scan(ctx)
	if err != nil {
		if store.Translate(err) == store.ErrNotFound {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("load project %s: %w", key, err)
	}
	return row.access(), nil
}
