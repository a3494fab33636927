// Package user holds rules about users that are not account management (see auth):
// finding people to add to projects and organizations.
package user

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/store"
)

// ErrSearchForbidden refuses callers who administer nothing: user search exists to add
// members, so only those who can add members may list people.
var ErrSearchForbidden = errors.New("user: search not allowed")

// Search limits.
const (
	MinQueryLength = 2
	MaxResults     = 10
)

// MaySearch reports whether p is a system ADMIN, owns or administers a project, or is
// an OWNER or ADMIN of an organization.
func MaySearch(ctx context.Context, db bun.IDB, p *auth.Principal) (bool, error) {
	if p.IsAdmin() {
		return true, nil
	}
	var ok bool
	err := db.NewRaw(`SELECT EXISTS (SELECT 1 FROM projects WHERE owner_id = ?)
		OR EXISTS (SELECT 1 FROM project_members WHERE user_id = ? AND role = 'ADMIN')
		OR EXISTS (SELECT 1 FROM organization_members WHERE user_id = ? AND role IN ('OWNER', 'ADMIN'))`,
		p.UserID, p.UserID, p.UserID).Scan(ctx, &ok)
	if err != nil {
		return false, fmt.Errorf("check user search right: %w", err)
	}
	return ok, nil
}

// Search finds at most MaxResults active, not deleted users whose email or display name
// contains q, ignoring case, ordered by display name. A trimmed q shorter than
// MinQueryLength finds nobody.
func Search(ctx context.Context, db bun.IDB, p *auth.Principal, q string) ([]store.User, error) {
	ok, err := MaySearch(ctx, db, p)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrSearchForbidden
	}
	out := []store.User{}
	q = strings.TrimSpace(q)
	// Stored text never holds NUL, so such a query matches nobody.
	if utf8.RuneCountInString(q) < MinQueryLength || strings.ContainsRune(q, 0) {
		return out, nil
	}
	pattern := "%" + escapeLike(q) + "%"
	err = db.NewSelect().Model(&out).Column("id", "email", "display_name").
		Where("active AND deleted_at IS NULL").
		Where("(email ILIKE ? OR display_name ILIKE ?)", pattern, pattern).
		OrderExpr("lower(display_name), email, id").
		Limit(MaxResults).
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("search users: %w", err)
	}
	return out, nil
}

// escapeLike makes q match literally inside a LIKE pattern (backslash is Postgres's
// default escape character).
func escapeLike(q string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q)
}
