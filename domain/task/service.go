package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// Viewer is who reads or changes a task: its creator, a project ADMIN of its project or
// a system ADMIN may; anyone else is told it does not exist.
type Viewer struct {
	UserID uuid.UUID
	Admin  bool
}

// NewTask is a task to queue.
type NewTask struct {
	Kind      string
	CreatedBy uuid.UUID
	Project   *store.Project
	// Params is the kind's request, as the worker will read it.
	Params any
	// Items, when known at once (a bulk change's issue ids), fixes the work list; nil
	// lets the kind plan it on its first batch.
	Items []string
}

// jobArgs is the River job of a task of kind.
func jobArgs(kind string, id uuid.UUID) (river.JobArgs, error) {
	run := jobs.TaskRun{TaskID: id, Type: kind}
	switch kind {
	case KindBulkChange:
		return jobs.TaskBulkChange{TaskRun: run}, nil
	case KindExport:
		return jobs.TaskExport{TaskRun: run}, nil
	case KindImport:
		return jobs.TaskImport{TaskRun: run}, nil
	case KindUndo:
		return jobs.TaskUndo{TaskRun: run}, nil
	}
	return nil, fmt.Errorf("task: unknown kind %q", kind)
}

// Create writes the task's row and queues its job on tx: both commit or neither.
func Create(ctx context.Context, tx bun.Tx, bus *event.Bus, in NewTask) (*store.Task, error) {
	params, err := json.Marshal(in.Params)
	if err != nil {
		return nil, fmt.Errorf("task params: %w", err)
	}
	items := []byte("[]")
	if in.Items != nil {
		if items, err = json.Marshal(in.Items); err != nil {
			return nil, fmt.Errorf("task items: %w", err)
		}
	}
	t := &store.Task{ID: uuid.New(), Kind: in.Kind, State: StateQueued, CreatedBy: in.CreatedBy,
		Params: params, Items: items, StateData: json.RawMessage("{}"), Total: len(in.Items),
		Errors: []store.TaskError{}}
	if in.Project != nil {
		t.ProjectID, t.ProjectKey = &in.Project.ID, &in.Project.Key
	}
	args, err := jobArgs(in.Kind, t.ID)
	if err != nil {
		return nil, err
	}
	if _, err := tx.NewInsert().Model(t).Returning("created_at").Exec(ctx); err != nil {
		return nil, fmt.Errorf("insert task: %w", err)
	}
	if err := bus.Enqueue(ctx, tx, river.InsertManyParams{Args: args}); err != nil {
		return nil, err
	}
	return t, nil
}

// Get reads task id as v may see it, else ErrNotFound.
func Get(ctx context.Context, db bun.IDB, id uuid.UUID, v Viewer) (*store.Task, error) {
	t, err := load(ctx, db, id, false)
	if err != nil {
		return nil, err
	}
	if err := maySee(ctx, db, t, v); err != nil {
		return nil, err
	}
	return t, nil
}

// load reads task id, locking it FOR UPDATE when lock is set.
func load(ctx context.Context, db bun.IDB, id uuid.UUID, lock bool) (*store.Task, error) {
	t := new(store.Task)
	q := db.NewSelect().Model(t).Where("t.id = ?", id)
	if lock {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		if errors.Is(store.Translate(err), store.ErrNotFound) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("load task %s: %w", id, err)
	}
	return t, nil
}

// maySee is nil when v may see t: its creator, a system ADMIN, or an ADMIN (effective
// role) of its project.
func maySee(ctx context.Context, db bun.IDB, t *store.Task, v Viewer) error {
	if v.Admin || t.CreatedBy == v.UserID {
		return nil
	}
	if t.ProjectKey == nil {
		return ErrNotFound
	}
	a, err := project.Load(ctx, db, *t.ProjectKey, &auth.Principal{UserID: v.UserID})
	if errors.Is(err, project.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	if !a.Role.AtLeast(project.Admin) {
		return ErrNotFound
	}
	return nil
}

// lockVisible reads task id FOR UPDATE as v may see it, else ErrNotFound.
func lockVisible(ctx context.Context, tx bun.Tx, id uuid.UUID, v Viewer) (*store.Task, error) {
	t, err := load(ctx, tx, id, true)
	if err != nil {
		return nil, err
	}
	if err := maySee(ctx, tx, t, v); err != nil {
		return nil, err
	}
	return t, nil
}

// ListMine is a page of the tasks userID created, newest first, and their count.
//
// after, in a cursor walk, is the last task handed out: the page is the tasks after it
// in that order (store.After), and the total still counts them all.
func ListMine(ctx context.Context, db bun.IDB, userID uuid.UUID, after *store.After, offset, limit int) ([]store.Task, int, error) {
	var ts []store.Task
	if after == nil {
		n, err := db.NewSelect().Model(&ts).Where("t.created_by = ?", userID).
			OrderExpr("t.created_at DESC, t.id DESC").Offset(int64(offset)).Limit(int64(limit)).ScanAndCount(ctx)
		if err != nil {
			return nil, 0, fmt.Errorf("list tasks: %w", err)
		}
		return ts, int(n), nil
	}
	n, err := db.NewSelect().Model((*store.Task)(nil)).Where("t.created_by = ?", userID).Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("count tasks: %w", err)
	}
	err = db.NewSelect().Model(&ts).Where("t.created_by = ?", userID).Where("(t.created_at, t.id) < (?, ?)", after.Time, after.ID).
		OrderExpr("t.created_at DESC, t.id DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("list tasks: %w", err)
	}
	return ts, int(n), nil
}

// Cancel stops task id: a queued task is CANCELLED at once; a running one stops before
// its next batch (what its committed batches did stays, and an import can be undone).
// A finished task is ErrFinished.
func Cancel(ctx context.Context, db bun.IDB, id uuid.UUID, v Viewer) (*store.Task, error) {
	var out *store.Task
	err := store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		t, err := lockVisible(ctx, tx, id, v)
		if err != nil {
			return err
		}
		if Finished(t.State) {
			return ErrFinished
		}
		q := tx.NewUpdate().Model(t).WherePK().Set("cancel_requested = true")
		if t.State == StateQueued {
			q = q.Set("state = ?", StateCancelled).Set("finished_at = now()")
		}
		if _, err := q.Returning("*").Exec(ctx); err != nil {
			return fmt.Errorf("cancel task: %w", err)
		}
		out = t
		return nil
	})
	return out, err
}
