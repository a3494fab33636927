package workflow

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// CreateDefault creates the "Default Workflow" of a new project (To Do, In Progress,
// Done; no transitions), assigns it to the project and returns it. It runs in the
// project's creation transaction.
func CreateDefault(ctx context.Context, tx bun.IDB, projectID uuid.UUID) (*store.Workflow, error) {
	wf := &store.Workflow{Name: "Default Workflow", ProjectID: projectID, IsDefault: true}
	if _, err := tx.NewInsert().Model(wf).Returning("*").Exec(ctx); err != nil {
		return nil, fmt.Errorf("create default workflow: %w", err)
	}
	statuses := []store.WorkflowStatus{
		{WorkflowID: wf.ID, Name: "To Do", Category: CategoryTodo, Color: "#6c8fef", Position: 0},
		{WorkflowID: wf.ID, Name: "In Progress", Category: CategoryInProgress, Color: "#ffb432", Position: 1},
		{WorkflowID: wf.ID, Name: "Done", Category: CategoryDone, Color: "#63dc78", Position: 2},
	}
	if _, err := tx.NewInsert().Model(&statuses).Exec(ctx); err != nil {
		return nil, fmt.Errorf("create default statuses: %w", err)
	}
	if _, err := tx.NewUpdate().Table("projects").Set("workflow_id = ?", wf.ID).Where("id = ?", projectID).Exec(ctx); err != nil {
		return nil, fmt.Errorf("assign default workflow: %w", err)
	}
	return wf, nil
}
