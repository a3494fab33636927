package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store"
)

// MaxBulkIssues is the most issues one bulk change may name or its filter may match.
const MaxBulkIssues = 10_000

// Actor is the task creator as the changes the task makes record them (audit, activity).
type Actor struct {
	UserID      uuid.UUID `json:"userId"`
	Email       string    `json:"email"`
	DisplayName string    `json:"displayName"`
	IP          string    `json:"ip,omitempty"`
	UserAgent   string    `json:"userAgent,omitempty"`
}

// Changes is what a bulk change does to every issue; nil and empty members change
// nothing.
type Changes struct {
	StatusID          *uuid.UUID          `json:"statusId,omitempty"`
	AssigneeID        *uuid.UUID          `json:"assigneeId,omitempty"`
	ClearAssignee     bool                `json:"clearAssignee,omitempty"`
	Priority          *string             `json:"priority,omitempty"`
	AddLabelIDs       []uuid.UUID         `json:"addLabelIds,omitempty"`
	RemoveLabelIDs    []uuid.UUID         `json:"removeLabelIds,omitempty"`
	SprintID          *uuid.UUID          `json:"sprintId,omitempty"`
	ClearSprint       bool                `json:"clearSprint,omitempty"`
	VersionID         *uuid.UUID          `json:"versionId,omitempty"`
	CustomFieldValues []customfield.Input `json:"customFieldValues,omitempty"`
	Delete            bool                `json:"delete,omitempty"`
}

// BulkParams is a bulk change task's request.
type BulkParams struct {
	Actor   Actor   `json:"actor"`
	Changes Changes `json:"changes"`
}

// QueueBulkChange queues a bulk change of the issues ids of project p on tx.
func QueueBulkChange(ctx context.Context, tx bun.Tx, bus *event.Bus, p *store.Project, actor Actor, ids []uuid.UUID, c Changes) (*store.Task, error) {
	items := make([]string, len(ids))
	for i, id := range ids {
		items[i] = id.String()
	}
	return Create(ctx, tx, bus, NewTask{Kind: KindBulkChange, CreatedBy: actor.UserID, Project: p,
		Params: BulkParams{Actor: actor, Changes: c}, Items: items})
}

// Bulk is the bulk change handler: each issue changes through the issue rules
// (issue.Service), in a savepoint of its own, so a refused change is that issue's
// error while the others of the batch commit.
type Bulk struct {
	Issues *issue.Service
}

// Batch implements Handler.
func (h *Bulk) Batch(ctx context.Context, tx bun.Tx, t *store.Task, n int) (Batch, error) {
	var params BulkParams
	if err := json.Unmarshal(t.Params, &params); err != nil {
		return Batch{}, fmt.Errorf("bulk params: %w", err)
	}
	var items []uuid.UUID
	if err := json.Unmarshal(t.Items, &items); err != nil {
		return Batch{}, fmt.Errorf("bulk items: %w", err)
	}
	a, actor, err := taskActor(ctx, tx, t, params.Actor)
	if err != nil {
		return Batch{}, err
	}
	need := project.Member
	if params.Changes.Delete {
		need = project.Admin
	}
	if !a.Role.AtLeast(need) {
		return Batch{}, Fail("", "FORBIDDEN", "%s no longer has the role %s in project %s", params.Actor.Email, need, a.Project.Key)
	}
	p := issue.Project{ID: a.Project.ID, Key: a.Project.Key, WorkflowID: a.Project.WorkflowID}
	end := min(t.Cursor+n, len(items))
	batch := items[t.Cursor:end]
	keys, err := issueKeys(ctx, tx, p.ID, batch)
	if err != nil {
		return Batch{}, err
	}
	// Notifications of the task to one user fold into one (event.WithTask).
	ctx = event.WithTask(ctx, t.ID)
	var out Batch
	for _, id := range batch {
		key, ok := keys[id]
		if !ok {
			out.Errors = append(out.Errors, store.TaskError{Item: id.String(), Code: "ISSUE_NOT_FOUND",
				Message: "the issue no longer exists in this project"})
			continue
		}
		// bun hands a savepoint's function the context the transaction began with,
		// not the one given: ctx (which carries the task) is used as it is.
		err := tx.RunInTx(ctx, nil, func(_ context.Context, sp bun.Tx) error {
			return h.apply(ctx, sp, p, actor, id, params.Changes)
		})
		if err != nil {
			code, ok := itemCode(err)
			if !ok {
				return Batch{}, fmt.Errorf("bulk change of %s: %w", key, err)
			}
			out.Errors = append(out.Errors, store.TaskError{Item: key, Code: code, Message: err.Error()})
		}
	}
	out.Consumed, out.Done = len(batch), end >= len(items)
	return out, nil
}

// apply changes one issue on sp.
func (h *Bulk) apply(ctx context.Context, sp bun.Tx, p issue.Project, actor issue.Actor, id uuid.UUID, c Changes) error {
	svc := h.Issues.WithTx(sp)
	ref := issue.Ref{ID: id}
	if c.Delete {
		return svc.Delete(ctx, p, actor, ref)
	}
	patch := issue.Patch{StatusID: c.StatusID, AssigneeID: c.AssigneeID, ClearAssignee: c.ClearAssignee,
		Priority: c.Priority, SprintID: c.SprintID, ClearSprint: c.ClearSprint, CustomFieldValues: c.CustomFieldValues}
	if len(c.AddLabelIDs) > 0 || len(c.RemoveLabelIDs) > 0 {
		var cur []uuid.UUID
		if err := sp.NewSelect().Table("issue_labels").Column("label_id").Where("issue_id = ?", id).Scan(ctx, &cur); err != nil {
			return fmt.Errorf("read labels: %w", err)
		}
		next := setChange(cur, c.AddLabelIDs, c.RemoveLabelIDs)
		patch.LabelIDs = &next
	}
	if c.VersionID != nil {
		var cur []uuid.UUID
		if err := sp.NewSelect().Table("issue_versions").Column("version_id").
			Where("issue_id = ? AND type = ?", id, issue.VersionFix).Scan(ctx, &cur); err != nil {
			return fmt.Errorf("read versions: %w", err)
		}
		next := setChange(cur, []uuid.UUID{*c.VersionID}, nil)
		patch.FixVersionIDs = &next
	}
	return svc.Apply(ctx, p, actor, ref, patch)
}

// setChange is cur with add added and remove removed, in a stable order.
func setChange(cur, add, remove []uuid.UUID) []uuid.UUID {
	gone := map[uuid.UUID]bool{}
	for _, id := range remove {
		gone[id] = true
	}
	seen := map[uuid.UUID]bool{}
	out := []uuid.UUID{}
	for _, list := range [][]uuid.UUID{cur, add} {
		for _, id := range list {
			if !gone[id] && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// issueKeys maps the ids of project projectID's issues among ids to their keys.
func issueKeys(ctx context.Context, db bun.IDB, projectID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]string, error) {
	var rows []struct {
		ID  uuid.UUID `bun:"id"`
		Key string    `bun:"key"`
	}
	if len(ids) == 0 {
		return map[uuid.UUID]string{}, nil
	}
	if err := db.NewSelect().Table("issues").Column("id", "key").Where("project_id = ?", projectID).
		Where("id IN (?)", bun.In(ids)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read issue keys: %w", err)
	}
	out := make(map[uuid.UUID]string, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Key
	}
	return out, nil
}

// taskActor reads t's project with the creator's roles as they are now: a creator who
// has lost access fails the task, rather than acting with the roles of the past.
func taskActor(ctx context.Context, db bun.IDB, t *store.Task, who Actor) (*project.Access, issue.Actor, error) {
	if t.ProjectKey == nil {
		return nil, issue.Actor{}, Fail("", "PROJECT_NOT_FOUND", "the task has no project")
	}
	a, err := project.Load(ctx, db, *t.ProjectKey, &auth.Principal{UserID: who.UserID})
	if errors.Is(err, project.ErrNotFound) {
		return nil, issue.Actor{}, Fail("", "PROJECT_NOT_FOUND", "project %s no longer exists", *t.ProjectKey)
	}
	if err != nil {
		return nil, issue.Actor{}, err
	}
	actor := issue.Actor{Actor: audit.Actor{UserID: who.UserID, Email: who.Email, IP: who.IP, UserAgent: who.UserAgent},
		DisplayName: who.DisplayName, MemberRole: string(a.MemberRole)}
	return a, actor, nil
}

// itemErrors are the rule errors that fail one item, each with its code; any other
// error fails the batch (which is retried).
var itemErrors = []struct {
	err  error
	code string
}{
	{issue.ErrNotFound, "ISSUE_NOT_FOUND"},
	{issue.ErrAssigneeNotMember, "ASSIGNEE_NOT_MEMBER"},
	{issue.ErrSubtaskNeedsParent, "SUBTASK_NEEDS_PARENT"},
	{issue.ErrSprintNotFound, "SPRINT_NOT_FOUND"},
	{issue.ErrSprintNotInProject, "SPRINT_NOT_IN_PROJECT"},
	{issue.ErrSprintClosed, "SPRINT_STATE"},
	{workflow.ErrTransitionNotAllowed, "TRANSITION_NOT_ALLOWED"},
	{workflow.ErrStatusNotInWorkflow, "STATUS_NOT_IN_WORKFLOW"},
	{workflow.ErrStatusNotFound, "STATUS_NOT_FOUND"},
	{customfield.ErrNotFound, "CUSTOM_FIELD_NOT_FOUND"},
	{customfield.ErrOptionNotFound, "OPTION_NOT_FOUND"},
}

// itemCode is the code of an error that fails one item; ok is false for any other.
func itemCode(err error) (code string, ok bool) {
	for _, e := range itemErrors {
		if errors.Is(err, e.err) {
			return e.code, true
		}
	}
	var guard *workflow.GuardError
	var invalid *customfield.InvalidError
	var required *customfield.RequiredError
	switch {
	case errors.As(err, &guard):
		return "GUARD_FAILED", true
	case errors.As(err, &invalid):
		return "INVALID_CUSTOM_FIELD_VALUE", true
	case errors.As(err, &required):
		return "CUSTOM_FIELD_REQUIRED", true
	}
	return "", false
}

// ResolveKeys maps issue keys of project projectID to their ids, in order; unknown is
// the index of the first key that names no issue of the project (-1 when all do).
func ResolveKeys(ctx context.Context, db bun.IDB, projectID uuid.UUID, keys []string) (ids []uuid.UUID, unknown int, err error) {
	var rows []struct {
		ID  uuid.UUID `bun:"id"`
		Key string    `bun:"key"`
	}
	if len(keys) > 0 {
		if err := db.NewSelect().Table("issues").Column("id", "key").Where("project_id = ?", projectID).
			Where("key IN (?)", bun.In(keys)).Scan(ctx, &rows); err != nil {
			return nil, -1, fmt.Errorf("resolve issue keys: %w", err)
		}
	}
	byKey := make(map[string]uuid.UUID, len(rows))
	for _, r := range rows {
		byKey[r.Key] = r.ID
	}
	seen := make(map[uuid.UUID]bool, len(keys))
	for i, k := range keys {
		id, ok := byKey[k]
		if !ok {
			return nil, i, nil
		}
		if !seen[id] { // a key named twice changes its issue once
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, -1, nil
}
