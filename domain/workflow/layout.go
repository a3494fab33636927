package workflow

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// Position is where the workflow editor draws a status on its canvas.
type Position struct {
	StatusID uuid.UUID
	X        int
	Y        int
}

// positionRow is a row of workflow_status_positions.
type positionRow struct {
	bun.BaseModel `bun:"table:workflow_status_positions"`

	WorkflowID uuid.UUID `bun:"workflow_id,pk,type:uuid"`
	StatusID   uuid.UUID `bun:"status_id,pk,type:uuid"`
	X          int       `bun:"x"`
	Y          int       `bun:"y"`
}

// loadLayout reads the canvas positions in the order of their statuses.
func loadLayout(ctx context.Context, db bun.IDB, workflowID uuid.UUID) ([]Position, error) {
	var rows []positionRow
	err := db.NewSelect().Model(&rows).
		ColumnExpr("pos.*").
		Join("JOIN workflow_statuses AS s ON s.id = pos.status_id").
		Where("pos.workflow_id = ?", workflowID).
		OrderExpr("s.position, s.created_at, s.id").
		ModelTableExpr("workflow_status_positions AS pos").
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("load layout of %s: %w", workflowID, err)
	}
	out := make([]Position, 0, len(rows))
	for _, r := range rows {
		out = append(out, Position{StatusID: r.StatusID, X: r.X, Y: r.Y})
	}
	return out, nil
}

// ReplaceLayout makes positions the whole canvas layout: statuses left out lose their
// position. Every status must be of the workflow (else ErrStatusNotFound, nothing
// changed); a status named twice keeps its last entry.
func ReplaceLayout(ctx context.Context, db bun.IDB, workflowID uuid.UUID, positions []Position) error {
	rows := make([]positionRow, 0, len(positions))
	at := map[uuid.UUID]int{}
	ids := make([]uuid.UUID, 0, len(positions))
	for _, p := range positions {
		row := positionRow{WorkflowID: workflowID, StatusID: p.StatusID, X: p.X, Y: p.Y}
		if i, ok := at[p.StatusID]; ok {
			rows[i] = row
			continue
		}
		at[p.StatusID] = len(rows)
		rows = append(rows, row)
		ids = append(ids, p.StatusID)
	}
	return store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		// Under the lock two concurrent replacements apply one after the other instead
		// of colliding on the primary key.
		if err := lockWorkflow(ctx, tx, workflowID); err != nil {
			return err
		}
		if err := requireStatuses(ctx, tx, workflowID, ids); err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model((*positionRow)(nil)).Where("workflow_id = ?", workflowID).Exec(ctx); err != nil {
			return fmt.Errorf("clear layout of %s: %w", workflowID, err)
		}
		if len(rows) == 0 {
			return nil
		}
		if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
			return fmt.Errorf("save layout of %s: %w", workflowID, err)
		}
		return nil
	})
}
