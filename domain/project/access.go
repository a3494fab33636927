// Package project owns projects, their members and the one authorization rule every
// project endpoint uses: the caller's effective project role.
package project

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
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

// roleSQL is the one statement fragment that reads the caller's roles in a project:
// the columns member_role (the explicit role, ADMIN for the owner) and org_role (the
// organization role), and the joins they read, on projects aliased p for the user the
// placeholder user names. The joins are unique per project, so rows never repeat.
// selectWithRoles (bun, ?) and LoadWithLogin (pgx, $2) both build on it.
func roleSQL(p, user string) (columns, joins string) {
	columns = "CASE WHEN " + p + ".owner_id = " + user + " THEN 'ADMIN' ELSE pm.role END AS member_role, om.role AS org_role"
	joins = "LEFT JOIN project_members AS pm ON pm.project_id = " + p + ".id AND pm.user_id = " + user +
		"\nLEFT JOIN organization_members AS om ON om.org_id = " + p + ".org_id AND om.user_id = " + user
	return columns, joins
}

// bunRoleColumns and bunRoleJoins are roleSQL for bun's model alias of projects.
var bunRoleColumns, bunRoleJoins = roleSQL("project", "?")

// selectWithRoles selects projects (alias project) with the caller's explicit and
// organization roles (roleSQL).
func selectWithRoles(db bun.IDB, dst any, uid uuid.UUID) *bun.SelectQuery {
	return db.NewSelect().Model(dst).
		ColumnExpr("project.*").
		ColumnExpr(bunRoleColumns, uid).
		Join(bunRoleJoins, uid, uid)
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

// LoadWithUser is Load for a caller whose credential is checked with the project, in
// the same statement: it also returns the caller's user row (nil when there is none),
// which the API checks as authentication would have (auth.AccessClaims.Principal).
// Unknown key → ErrNotFound, and no user row: the caller checks the credential alone.
//
// It runs on pgx with a fixed statement (loadWithUserSQL, whose roles are roleSQL as
// selectWithRoles's are): it precedes every request on a project's issues, and
// building the query and scanning it by reflection through bun would cost about as
// much Go time as the issue list's own statement.
func LoadWithUser(ctx context.Context, db Querier, key string, userID uuid.UUID, extra *Extra) (*Access, *store.User, error) {
	a, u, _, err := LoadWithLogin(ctx, db, key, userID, nil, extra)
	return a, u, err
}

// LoadWithLogin is LoadWithUser for an access token of the login session family (nil:
// none): familyLive, read in the same statement, tells whether that session is alive
// (auth.FamilyLiveSQL), for auth.AccessClaims.Principal.
func LoadWithLogin(ctx context.Context, db Querier, key string, userID uuid.UUID, family *uuid.UUID, extra *Extra) (*Access, *store.User, bool, error) {
	var familyLive bool
	query := loadWithUserSQL
	if extra != nil {
		query = loadWithUserColumns + extra.Columns + loadWithUserFrom + extra.Joins + loadWithUserWhere
	}
	a, u, err := scanAccess(ctx, db, key, query, []any{store.UUID(userID), store.NullUUID(family)}, []any{&familyLive}, extra)
	return a, u, familyLive, err
}

// scanAccess runs an access statement of project key ($1, then args): the project's
// columns and the caller's roles (accessColumns), the user's (auth.UserScan), then
// more's and extra's columns, in that order.
func scanAccess(ctx context.Context, db Querier, key, query string, args, more []any, extra *Extra) (*Access, *store.User, error) {
	var (
		row                      roleRow
		pr                       = &row.Project
		id, owner, workflow, org pgtype.UUID
		user                     auth.UserScan
	)
	dst := make([]any, 0, 40)
	dst = append(dst, &id, &pr.Key, &pr.Name, &pr.Description, &owner, &workflow,
		&pr.Archived, &pr.NodeID, &org, &pr.IssueSeq, &pr.CreatedAt, &pr.UpdatedAt, &row.MemberRole, &row.OrgRole)
	dst = append(user.AppendDest(dst), more...)
	if extra != nil {
		dst = append(dst, extra.Dest...)
	}
	if err := db.QueryRow(ctx, query, append([]any{key}, args...)...).Scan(dst...); err != nil {
		if store.IsNotFound(err) {
			return nil, nil, ErrNotFound
		}
		return nil, nil, fmt.Errorf("load project %s: %w", key, err)
	}
	pr.ID, pr.OwnerID = id.Bytes, owner.Bytes
	pr.WorkflowID, pr.OrgID = store.UUIDPtr(workflow), store.UUIDPtr(org)
	if extra != nil {
		extra.Scanned = true
	}
	return row.access(), user.User(), nil
}

// LoadWithCredential is LoadWithUser for a personal access token or API key whose row
// is not read yet (auth.PendingCredential): the credential's row, its user's and the
// project with that user's roles in one statement. The credential's columns are
// scanned into cred (all NULL for an unknown credential, and then the user is nil) for
// auth.Authenticator.PendingPrincipal, which judges them.
func LoadWithCredential(ctx context.Context, db Querier, key string, pc *auth.PendingCredential, cred *auth.CredentialScan, extra *Extra) (*Access, *store.User, error) {
	columns, joins := credentialRoleColumns, credentialRoleJoins
	if extra != nil {
		columns += extra.Columns
		joins += extra.Joins
	}
	query := columns + `
FROM projects AS p
LEFT JOIN ` + pc.SQL("$2") + ` AS c ON true
` + joins + `
WHERE p.key = $1`
	return scanAccess(ctx, db, key, query, []any{pc.Hash()}, cred.AppendDest(nil), extra)
}

// credentialRoleColumns and credentialRoleJoins are loadWithUserSQL's columns (without
// the login session) and joins for the user of a credential's row aliased c.
var (
	credentialRoles, credentialRoleJoinsOnly = roleSQL("p", "c.uid")
	credentialRoleColumns                    = accessColumns + credentialRoles + `,
	u.` + strings.Join(auth.UserColumns, ", u.") + `,
	` + auth.CredentialColumns
	credentialRoleJoins = credentialRoleJoinsOnly + `
LEFT JOIN users AS u ON u.id = c.uid`
)

// Extra is what a caller reads in LoadWithUser's statement besides the project and the
// user: Columns (each preceded by a comma) and Joins on the projects row aliased p,
// scanned into Dest. Scanned says the statement ran and Dest holds them. POST /issues
// reads its create context so (issue.ContextRead), one statement fewer per create.
type Extra struct {
	Columns, Joins string
	Dest           []any
	Scanned        bool
}

// Querier runs one pgx statement (a *pgxpool.Pool, a pgx.Tx).
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// accessColumns are the project's columns of an access statement (scanAccess), before
// the caller's roles.
const accessColumns = `SELECT p.id, p.key, p.name, p.description, p.owner_id, p.workflow_id, p.archived, p.node_id,
	p.org_id, p.issue_seq, p.created_at, p.updated_at, `

// loadWithUserSQL is selectWithRoles for key $1 and user $2 (roleSQL), with the user's
// row (auth.UserColumns, auth.UserScan) and whether the login session family $3 is
// alive (auth.FamilyLiveSQL; false for NULL), in the order LoadWithLogin scans.
var loadWithUserSQL = loadWithUserColumns + loadWithUserFrom + loadWithUserWhere

var (
	pgxRoleColumns, pgxRoleJoins = roleSQL("p", "$2")
	loadWithUserColumns          = accessColumns + pgxRoleColumns + `,
	u.` + strings.Join(auth.UserColumns, ", u.") + `,
	` + strings.Replace(auth.FamilyLiveSQL, "?", "$3", 1)
	loadWithUserFrom = `
FROM projects AS p
` + pgxRoleJoins + `
LEFT JOIN users AS u ON u.id = $2`
	loadWithUserWhere = `
WHERE p.key = $1`
)

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
		if store.IsNotFound(err) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("load project %s: %w", key, err)
	}
	return row.access(), nil
}
