package workflow

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// DefaultColor is the color of a status created without one.
const DefaultColor = "#6c8fef"

// Categories are the status categories in their usual order.
var Categories = []string{CategoryTodo, CategoryInProgress, CategoryDone}

// IsCategory reports whether c is a status category.
func IsCategory(c string) bool {
	return c == CategoryTodo || c == CategoryInProgress || c == CategoryDone
}

var colorPattern = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// IsColor reports whether c is a #RRGGBB color, the only form the editor stores.
func IsColor(c string) bool { return colorPattern.MatchString(c) }

// NewStatus is a validated status to append; an empty Color means DefaultColor.
type NewStatus struct {
	Name     string
	Category string
	Color    string
}

// StatusChange is a validated partial update; nil members stay unchanged.
type StatusChange struct {
	Name     *string
	Category *string
	Color    *string
}

// AddStatus appends a status to the workflow at position max+1 (0 for the first).
func AddStatus(ctx context.Context, db bun.IDB, workflowID uuid.UUID, in NewStatus) (*Status, error) {
	s := &Status{WorkflowID: workflowID, Name: in.Name, Category: in.Category, Color: in.Color}
	if s.Color == "" {
		s.Color = DefaultColor
	}
	err := store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		// The position is read under the workflow's lock so concurrent adds never share one.
		if err := lockWorkflow(ctx, tx, workflowID); err != nil {
			return err
		}
		if err := tx.NewSelect().Model((*Status)(nil)).ColumnExpr("coalesce(max(position), -1) + 1").
			Where("workflow_id = ?", workflowID).Scan(ctx, &s.Position); err != nil {
			return fmt.Errorf("next status position: %w", err)
		}
		if _, err := tx.NewInsert().Model(s).Returning("*").Exec(ctx); err != nil {
			return fmt.Errorf("insert status: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// UpdateStatus changes a status of the workflow; one of another workflow is
// ErrStatusNotFound.
func UpdateStatus(ctx context.Context, db bun.IDB, workflowID, id uuid.UUID, ch StatusChange) (*Status, error) {
	s := &Status{}
	if ch.Name == nil && ch.Category == nil && ch.Color == nil {
		err := db.NewSelect().Model(s).Where("id = ? AND workflow_id = ?", id, workflowID).Scan(ctx)
		return statusResult(s, err)
	}
	q := db.NewUpdate().Model(s).Where("id = ? AND workflow_id = ?", id, workflowID).Returning("*")
	if ch.Name != nil {
		q.Set("name = ?", *ch.Name)
	}
	if ch.Category != nil {
		q.Set("category = ?", *ch.Category)
	}
	if ch.Color != nil {
		q.Set("color = ?", *ch.Color)
	}
	return statusResult(s, q.Scan(ctx))
}

func statusResult(s *Status, err error) (*Status, error) {
	if err != nil {
		if store.IsNotFound(err) {
			return nil, ErrStatusNotFound
		}
		return nil, fmt.Errorf("status: %w", err)
	}
	return s, nil
}

// DeleteStatus removes a status with its transitions and canvas position. A status
// still used by issues is ErrStatusInUse: the foreign key issues_status_fk (ON DELETE
// RESTRICT) decides, so an issue moved onto the status meanwhile still blocks it.
func DeleteStatus(ctx context.Context, db bun.IDB, workflowID, id uuid.UUID) error {
	return store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if err := lockWorkflow(ctx, tx, workflowID); err != nil {
			return err
		}
		res, err := tx.NewDelete().Model((*Status)(nil)).Where("id = ? AND workflow_id = ?", id, workflowID).Exec(ctx)
		if err != nil {
			var ce *store.ConstraintError
			if errors.As(store.Translate(err), &ce) && ce.Constraint == "issues_status_fk" {
				return fmt.Errorf("delete status %s: %w", id, ErrStatusInUse)
			}
			return fmt.Errorf("delete status %s: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("delete status %s: %w", id, err)
		} else if n == 0 {
			return ErrStatusNotFound
		}
		return nil
	})
}
