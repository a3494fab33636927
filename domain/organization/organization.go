// Package organization owns organizations above projects and their members. An
// organization role is inherited on the organization's projects (see project.Load).
package organization

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/store"
)

// Role is an organization role; None means no membership.
type Role string

// Organization roles.
const (
	None   Role = ""
	Owner  Role = "OWNER"
	Admin  Role = "ADMIN"
	Member Role = "MEMBER"
)

// ParseRole validates a role name.
func ParseRole(s string) (Role, bool) {
	switch r := Role(s); r {
	case Owner, Admin, Member:
		return r, true
	}
	return None, false
}

// Errors of organizations.
var (
	ErrNotFound      = errors.New("organization: not found")
	ErrDuplicateSlug = errors.New("organization: duplicate slug")
	// ErrNotMember refuses a caller who neither belongs to the organization nor is a
	// system ADMIN.
	ErrNotMember = errors.New("organization: not a member")
	// ErrAdminOnly refuses a change by someone who is not an OWNER or ADMIN of the
	// organization nor a system ADMIN.
	ErrAdminOnly      = errors.New("organization: owner or admin required")
	ErrAlreadyMember  = errors.New("organization: already a member")
	ErrMemberNotFound = errors.New("organization: member not found")
	ErrUserNotFound   = errors.New("organization: user not found")
	ErrOwnRole        = errors.New("organization: own role")
	// ErrOwnerRule: granting OWNER needs an OWNER or system ADMIN; changing or removing
	// an OWNER needs a system ADMIN.
	ErrOwnerRule = errors.New("organization: owner rule")
	// ErrLastOwner keeps at least one OWNER in every organization.
	ErrLastOwner = errors.New("organization: last owner")
)

// SlugPattern is the slug rule.
var SlugPattern = regexp.MustCompile(`^[a-z0-9-]+$`)

// Access is an organization as one caller sees it.
type Access struct {
	Org store.Organization
	// Role is the caller's membership role, None without one.
	Role Role
	// SystemAdmin is true for a caller with the system role ADMIN.
	SystemAdmin bool
}

// Visible reports whether the caller may read the organization and its members.
func (a *Access) Visible() bool { return a.Role != None || a.SystemAdmin }

// Manages reports whether the caller may manage members and assign projects.
func (a *Access) Manages() bool { return a.Role == Owner || a.Role == Admin || a.SystemAdmin }

// Load reads an organization and the caller's role in it in one query; an unknown id is
// ErrNotFound.
func Load(ctx context.Context, db bun.IDB, id uuid.UUID, p *auth.Principal) (*Access, error) {
	var row struct {
		store.Organization `bun:",extend"`
		MemberRole         *string `bun:"member_role"`
	}
	err := db.NewSelect().Model(&row).
		ColumnExpr("organization.*").
		ColumnExpr("om.role AS member_role").
		Join("LEFT JOIN organization_members AS om ON om.org_id = organization.id AND om.user_id = ?", p.UserID).
		Where("organization.id = ?", id).
		Scan(ctx)
	if err != nil {
		if store.IsNotFound(err) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("load organization %s: %w", id, err)
	}
	a := &Access{Org: row.Organization, SystemAdmin: p.IsAdmin()}
	if row.MemberRole != nil {
		a.Role = Role(*row.MemberRole)
	}
	return a, nil
}

// Get returns an organization to a member or system ADMIN.
func Get(ctx context.Context, db bun.IDB, id uuid.UUID, p *auth.Principal) (*store.Organization, error) {
	a, err := Load(ctx, db, id, p)
	if err != nil {
		return nil, err
	}
	if !a.Visible() {
		return nil, ErrNotMember
	}
	return &a.Org, nil
}

// List returns every organization by name (system ADMIN only; the edge checks).
func List(ctx context.Context, db bun.IDB) ([]store.Organization, error) {
	out := []store.Organization{}
	if err := db.NewSelect().Model(&out).Order("name", "slug").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list organizations: %w", err)
	}
	return out, nil
}

// Mine returns the organizations the user belongs to, by name.
func Mine(ctx context.Context, db bun.IDB, uid uuid.UUID) ([]store.Organization, error) {
	out := []store.Organization{}
	err := db.NewSelect().Model(&out).
		Join("JOIN organization_members AS om ON om.org_id = organization.id AND om.user_id = ?", uid).
		Order("organization.name", "organization.slug").
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list organizations of %s: %w", uid, err)
	}
	return out, nil
}

// Create makes an organization with its creator as OWNER.
func Create(ctx context.Context, db bun.IDB, creator uuid.UUID, name, slug string) (*store.Organization, error) {
	org := store.Organization{Name: name, Slug: slug}
	err := store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&org).Returning("*").Exec(ctx); err != nil {
			if store.IsUnique(err, "organizations_slug_key") {
				return ErrDuplicateSlug
			}
			return err
		}
		m := store.OrganizationMember{OrgID: org.ID, UserID: creator, Role: string(Owner)}
		_, err := tx.NewInsert().Model(&m).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create organization %s: %w", slug, err)
	}
	return &org, nil
}

// RequireMember is the switch-org rule: only members get an organization-scoped token.
// An unknown organization has no members, so it is refused the same way.
func RequireMember(ctx context.Context, db bun.IDB, id uuid.UUID, uid uuid.UUID) error {
	ok, err := db.NewSelect().Table("organization_members").Where("org_id = ? AND user_id = ?", id, uid).Exists(ctx)
	if err != nil {
		return fmt.Errorf("check membership of %s: %w", id, err)
	}
	if !ok {
		return ErrNotMember
	}
	return nil
}
