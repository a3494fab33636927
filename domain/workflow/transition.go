// Package workflow owns per-project workflows: statuses, guarded transitions, the editor
// layout, and the rule that decides whether an issue may change status.
package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// Status categories.
const (
	CategoryTodo       = "TODO"
	CategoryInProgress = "IN_PROGRESS"
	CategoryDone       = "DONE"
)

// Guard kinds as they appear in the JSON text.
const (
	GuardRequiredField   = "REQUIRED_FIELD"
	GuardRoleRestriction = "ROLE_RESTRICTION"
)

// GuardFields are the issue fields a REQUIRED_FIELD guard can name.
var GuardFields = []string{"title", "description", "assigneeId", "storyPoints", "dueDate"}

// Guard is one guard of a transition.
type Guard struct {
	Type  string   `json:"type"`
	Field string   `json:"field,omitempty"`
	Roles []string `json:"roles,omitempty"`
}

// Errors of the status-change rule.
var (
	ErrTransitionNotAllowed = errors.New("workflow: transition not allowed")
	ErrStatusNotInWorkflow  = errors.New("workflow: status not in the project's workflow")
	ErrNoDefaultStatus      = errors.New("workflow: no TODO status for new issues")
)

// GuardError is a refused guard: Field names the missing field, or Role the actor's role.
type GuardError struct {
	Field string
	Role  string
}

func (e *GuardError) Error() string {
	if e.Field != "" {
		return "workflow: required field " + e.Field + " is empty"
	}
	return "workflow: role " + e.Role + " may not make this transition"
}

// IssueFields are the values a REQUIRED_FIELD guard looks at, after the change.
type IssueFields struct {
	Title       string
	Description *string
	AssigneeID  *uuid.UUID
	StoryPoints *int
	DueDate     *time.Time
}

func (f IssueFields) empty(field string) bool {
	switch field {
	case "title":
		return strings.TrimSpace(f.Title) == ""
	case "description":
		return f.Description == nil || strings.TrimSpace(*f.Description) == ""
	case "assigneeId":
		return f.AssigneeID == nil
	case "storyPoints":
		return f.StoryPoints == nil
	case "dueDate":
		return f.DueDate == nil
	}
	return false
}

// CheckStatusChange applies the status-change rule (docs/api-conventions.md#workflows):
// allowed when the project has no workflow, or the workflow has no transitions, or a
// transition from the current status (or from any status) to the target exists whose
// guards all pass. memberRole is the actor's explicit project role name ("" = NONE).
func CheckStatusChange(ctx context.Context, db bun.IDB, workflowID *uuid.UUID, from, to uuid.UUID, fields IssueFields, memberRole string) error {
	if workflowID == nil {
		return nil
	}
	var ts []store.WorkflowTransition
	// Ordered, so that when every matching transition refuses, the guard reported is
	// always the same one.
	if err := db.NewSelect().Model(&ts).Where("workflow_id = ?", *workflowID).Order("created_at", "id").Scan(ctx); err != nil {
		return fmt.Errorf("load transitions: %w", err)
	}
	if len(ts) == 0 {
		return nil
	}
	var guardErr error
	for _, t := range ts {
		if t.ToStatusID != to || (t.FromStatusID != nil && *t.FromStatusID != from) {
			continue
		}
		err := checkGuards(t.Guards, fields, memberRole)
		if err == nil {
			return nil
		}
		guardErr = err
	}
	if guardErr != nil {
		return guardErr
	}
	return ErrTransitionNotAllowed
}

func checkGuards(raw json.RawMessage, fields IssueFields, memberRole string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var guards []Guard
	if err := json.Unmarshal(raw, &guards); err != nil {
		return fmt.Errorf("read guards: %w", err)
	}
	role := memberRole
	if role == "" {
		role = "NONE"
	}
	for _, g := range guards {
		switch g.Type {
		case GuardRequiredField:
			if fields.empty(g.Field) {
				return &GuardError{Field: g.Field}
			}
		case GuardRoleRestriction:
			allowed := false
			for _, r := range g.Roles {
				if r == role {
					allowed = true
				}
			}
			if !allowed {
				return &GuardError{Role: role}
			}
		}
	}
	return nil
}

// Status is a status with the workflow it belongs to.
type Status = store.WorkflowStatus

// LoadStatus reads one status; a status of another workflow is ErrStatusNotInWorkflow.
func LoadStatus(ctx context.Context, db bun.IDB, workflowID *uuid.UUID, id uuid.UUID) (*Status, error) {
	var s Status
	if err := db.NewSelect().Model(&s).Where("id = ?", id).Scan(ctx); err != nil {
		if store.IsNotFound(err) {
			return nil, ErrStatusNotInWorkflow
		}
		return nil, fmt.Errorf("load status: %w", err)
	}
	if workflowID == nil || s.WorkflowID != *workflowID {
		return nil, ErrStatusNotInWorkflow
	}
	return &s, nil
}

// DefaultStatus is the lowest-position TODO status of the workflow: where new issues start.
func DefaultStatus(ctx context.Context, db bun.IDB, workflowID *uuid.UUID) (*Status, error) {
	if workflowID == nil {
		return nil, ErrNoDefaultStatus
	}
	var s Status
	err := db.NewSelect().Model(&s).Where("workflow_id = ? AND category = ?", *workflowID, CategoryTodo).
		Order("position", "created_at", "id").Limit(1).Scan(ctx)
	if err != nil {
		if store.IsNotFound(err) {
			return nil, ErrNoDefaultStatus
		}
		return nil, fmt.Errorf("default status: %w", err)
	}
	return &s, nil
}
