package workflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// Errors of workflow editing. Anything of another workflow counts as not found, so the
// editor cannot learn about other projects' workflows.
var (
	ErrWorkflowNotFound   = errors.New("workflow: not found")
	ErrStatusNotFound     = errors.New("workflow: status not found")
	ErrTransitionNotFound = errors.New("workflow: transition not found")
	ErrStatusInUse        = errors.New("workflow: status is used by issues")
)

// Transition is a transition row; Guards is the raw JSON array or nil.
type Transition = store.WorkflowTransition

// Workflow is a workflow with its parts, each in display order: statuses by position,
// transitions by creation, layout by the position of its status.
type Workflow struct {
	store.Workflow
	Statuses    []Status
	Transitions []Transition
	Layout      []Position
}

// Load reads one workflow with statuses, transitions and layout (four queries).
func Load(ctx context.Context, db bun.IDB, id uuid.UUID) (*Workflow, error) {
	wf := &Workflow{}
	if err := db.NewSelect().Model(&wf.Workflow).Where("id = ?", id).Scan(ctx); err != nil {
		if store.IsNotFound(err) {
			return nil, ErrWorkflowNotFound
		}
		return nil, fmt.Errorf("load workflow %s: %w", id, err)
	}
	wf.Statuses = []Status{}
	if err := db.NewSelect().Model(&wf.Statuses).Where("workflow_id = ?", id).
		Order("position", "created_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load statuses of %s: %w", id, err)
	}
	wf.Transitions = []Transition{}
	if err := db.NewSelect().Model(&wf.Transitions).Where("workflow_id = ?", id).
		Order("created_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load transitions of %s: %w", id, err)
	}
	layout, err := loadLayout(ctx, db, id)
	if err != nil {
		return nil, err
	}
	wf.Layout = layout
	return wf, nil
}

// List reads every workflow of a project with its statuses (two queries, whatever the
// count); transitions and layout are left empty.
func List(ctx context.Context, db bun.IDB, projectID uuid.UUID) ([]Workflow, error) {
	var rows []store.Workflow
	if err := db.NewSelect().Model(&rows).Where("project_id = ?", projectID).
		Order("created_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list workflows of project %s: %w", projectID, err)
	}
	out := make([]Workflow, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]uuid.UUID, len(rows))
	index := make(map[uuid.UUID]int, len(rows))
	for i, r := range rows {
		out[i] = Workflow{Workflow: r, Statuses: []Status{}}
		ids[i] = r.ID
		index[r.ID] = i
	}
	var statuses []Status
	if err := db.NewSelect().Model(&statuses).Where("workflow_id IN (?)", bun.In(ids)).
		Order("position", "created_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list statuses of project %s: %w", projectID, err)
	}
	for _, s := range statuses {
		i := index[s.WorkflowID]
		out[i].Statuses = append(out[i].Statuses, s)
	}
	return out, nil
}

// lockWorkflow takes the workflow row's lock for the rest of the transaction. Every
// edit that reads before it writes (positions, membership of statuses, the layout)
// holds it, so concurrent edits of one workflow apply one after the other. NO KEY
// UPDATE leaves foreign-key checks against the row (new statuses, projects) unblocked.
func lockWorkflow(ctx context.Context, tx bun.IDB, id uuid.UUID) error {
	var got uuid.UUID
	err := tx.NewSelect().Table("workflows").Column("id").Where("id = ?", id).For("NO KEY UPDATE").Scan(ctx, &got)
	if err != nil {
		if store.IsNotFound(err) {
			return ErrWorkflowNotFound
		}
		return fmt.Errorf("lock workflow %s: %w", id, err)
	}
	return nil
}

// requireStatuses fails with ErrStatusNotFound unless every id is a status of the
// workflow.
func requireStatuses(ctx context.Context, db bun.IDB, workflowID uuid.UUID, ids []uuid.UUID) error {
	distinct := map[uuid.UUID]bool{}
	for _, id := range ids {
		distinct[id] = true
	}
	if len(distinct) == 0 {
		return nil
	}
	n, err := db.NewSelect().Model((*Status)(nil)).
		Where("workflow_id = ? AND id IN (?)", workflowID, bun.In(ids)).Count(ctx)
	if err != nil {
		return fmt.Errorf("check statuses of workflow %s: %w", workflowID, err)
	}
	if n != int64(len(distinct)) {
		return ErrStatusNotFound
	}
	return nil
}
