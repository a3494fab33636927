package workflow

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// AddTransition adds a transition without guards from a status (nil = from any status)
// to another; both must be statuses of the workflow, else ErrStatusNotFound. The same
// pair may be added more than once: each copy carries its own guards, and a status
// change passes when any one of them does.
func AddTransition(ctx context.Context, db bun.IDB, workflowID uuid.UUID, from *uuid.UUID, to uuid.UUID) (*Transition, error) {
	t := &Transition{WorkflowID: workflowID, FromStatusID: from, ToStatusID: to}
	err := store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		// Under the lock no status of the workflow can go between the check and the insert.
		if err := lockWorkflow(ctx, tx, workflowID); err != nil {
			return err
		}
		ids := []uuid.UUID{to}
		if from != nil {
			ids = append(ids, *from)
		}
		if err := requireStatuses(ctx, tx, workflowID, ids); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(t).Returning("*").Exec(ctx); err != nil {
			return fmt.Errorf("insert transition: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// DeleteTransition removes a transition of the workflow; one of another workflow is
// ErrTransitionNotFound.
func DeleteTransition(ctx context.Context, db bun.IDB, workflowID, id uuid.UUID) error {
	res, err := db.NewDelete().Model((*Transition)(nil)).Where("id = ? AND workflow_id = ?", id, workflowID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete transition %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete transition %s: %w", id, err)
	} else if n == 0 {
		return ErrTransitionNotFound
	}
	return nil
}

// SetGuards replaces every guard of a transition with guards (validated by the caller;
// none clears them).
func SetGuards(ctx context.Context, db bun.IDB, workflowID, id uuid.UUID, guards []Guard) (*Transition, error) {
	raw, err := EncodeGuards(guards)
	if err != nil {
		return nil, err
	}
	t := &Transition{}
	q := db.NewUpdate().Model(t).Where("id = ? AND workflow_id = ?", id, workflowID).Returning("*")
	if raw == nil {
		q.Set("guards = NULL")
	} else {
		q.Set("guards = ?::jsonb", string(raw))
	}
	if err := q.Scan(ctx); err != nil {
		if store.IsNotFound(err) {
			return nil, ErrTransitionNotFound
		}
		return nil, fmt.Errorf("set guards of transition %s: %w", id, err)
	}
	return t, nil
}
