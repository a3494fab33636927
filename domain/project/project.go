package project

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/organization"
	"github.com/taskweave/taskweave/domain/revoke"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store"
)

// Errors of projects, members and API keys.
var (
	ErrDuplicateKey   = errors.New("project: duplicate key")
	ErrAlreadyMember  = errors.New("project: already a member")
	ErrUserNotFound   = errors.New("project: user not found")
	ErrMemberNotFound = errors.New("project: not a member")
	// ErrOwnRole refuses a change of one's own project role.
	ErrOwnRole = errors.New("project: own role")
	// ErrOwnerProtected refuses changing the owner's role or removing the owner.
	ErrOwnerProtected = errors.New("project: owner's membership is fixed")
	ErrAPIKeyNotFound = errors.New("project: API key not found")
)

// KeyPattern is the project key rule: 2–10 characters of A-Z and 0-9.
var KeyPattern = regexp.MustCompile(`^[A-Z0-9]{2,10}$`)

// Service changes projects, their members and API keys, recording security-relevant
// changes in the audit log on the same transaction.
type Service struct {
	db    bun.IDB
	audit *audit.Recorder
}

// NewService builds a Service.
func NewService(db bun.IDB, rec *audit.Recorder) *Service { return &Service{db: db, audit: rec} }

// entry is the audit entry of action by a on one resource of the project.
func entry(a audit.Actor, action string, projectID uuid.UUID, resourceType, resourceID, details string) audit.Entry {
	e := a.Entry(action, resourceType, resourceID, details)
	e.ProjectID = &projectID
	return e
}

// NewProject is a validated create request.
type NewProject struct {
	Key         string
	Name        string
	Description *string
}

// Create makes a project owned by the actor: the project row, the owner's ADMIN
// membership and the default workflow commit together.
func (s *Service) Create(ctx context.Context, by audit.Actor, in NewProject) (*Access, error) {
	p := store.Project{Key: in.Key, Name: in.Name, Description: in.Description, OwnerID: by.UserID}
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&p).Returning("*").Exec(ctx); err != nil {
			if store.IsUnique(err, "projects_key_key") {
				return ErrDuplicateKey
			}
			return err
		}
		m := store.ProjectMember{ProjectID: p.ID, UserID: by.UserID, Role: string(Admin)}
		if _, err := tx.NewInsert().Model(&m).Exec(ctx); err != nil {
			return err
		}
		wf, err := workflow.CreateDefault(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		p.WorkflowID = &wf.ID
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create project %s: %w", in.Key, err)
	}
	return &Access{Project: p, Role: Admin, MemberRole: Admin}, nil
}

// ListFor lists the projects the user owns, is a member of, or sees through an
// organization membership, each once and with the user's effective role, in one query.
func ListFor(ctx context.Context, db bun.IDB, uid uuid.UUID) ([]Access, error) {
	var rows []roleRow
	err := selectWithRoles(db, &rows, uid).
		Where("project.owner_id = ?", uid).
		WhereOr("project.id IN (SELECT project_id FROM project_members WHERE user_id = ?)", uid).
		WhereOr("project.org_id IN (SELECT org_id FROM organization_members WHERE user_id = ?)", uid).
		Order("project.key").
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	out := make([]Access, 0, len(rows))
	for i := range rows {
		out = append(out, *rows[i].access())
	}
	return out, nil
}

// SetOrganization assigns the project to an organization, or to none when orgID is nil.
// The actor (p is its principal) must be a project ADMIN or a system ADMIN, and an OWNER
// or ADMIN of the target organization unless a system ADMIN. The reply carries the
// actor's new effective role, which the organization may have raised.
func (s *Service) SetOrganization(ctx context.Context, by audit.Actor, p *auth.Principal, a *Access, orgID *uuid.UUID) (*Access, error) {
	if !a.Role.AtLeast(Admin) && !p.IsAdmin() {
		return nil, fmt.Errorf("%w: project admin required", ErrForbidden)
	}
	var out *Access
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if orgID != nil {
			org, err := organization.Load(ctx, tx, *orgID, p)
			if err != nil {
				return err
			}
			if !org.Manages() {
				return organization.ErrAdminOnly
			}
		}
		if _, err := tx.NewUpdate().Table("projects").Set("org_id = ?, updated_at = now()", orgID).
			Where("id = ?", a.Project.ID).Exec(ctx); err != nil {
			return err
		}
		// The old organization's members may have followed the board by inheritance.
		if err := revoke.Project(ctx, tx, a.Project.Key); err != nil {
			return err
		}
		var err error
		out, err = Load(ctx, tx, a.Project.Key, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("set organization of %s: %w", a.Project.Key, err)
	}
	return out, nil
}
