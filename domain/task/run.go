package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/realtime"
	"github.com/taskweave/taskweave/store"
)

// DefaultBatchSize is how many items one batch (one transaction) works through.
const DefaultBatchSize = 50

// Handler does the work of one kind of task, a batch at a time.
type Handler interface {
	// Batch works through at most n items from t.Cursor on, inside tx, which also
	// commits the advanced cursor: what it writes is applied exactly once. On the first
	// batch of a task whose items are not fixed yet it may plan them (an import writes
	// them to task_items) and set t.Total. It may keep state between batches in
	// t.StateData. t.Items is read-only here: it is fixed when the task is queued.
	Batch(ctx context.Context, tx bun.Tx, t *store.Task, n int) (Batch, error)
}

// Batch is what one batch did.
type Batch struct {
	// Consumed is how many items it worked through (applied, failed or skipped).
	Consumed int
	// Errors are the items of them that failed, each with its reason.
	Errors []store.TaskError
	// Done says no items remain: the task SUCCEEDED.
	Done bool
}

// Failure is an error that fails the whole task at once (a bad file, a project that
// is gone): retrying cannot help. Its batch rolls back; the task keeps what earlier
// batches committed.
type Failure struct {
	Item    string
	Code    string
	Message string
}

func (f *Failure) Error() string { return fmt.Sprintf("task failed: %s: %s", f.Code, f.Message) }

// Fail builds a Failure.
func Fail(item, code, format string, args ...any) *Failure {
	return &Failure{Item: item, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Runner works through tasks batch by batch.
type Runner struct {
	DB       *bun.DB
	Handlers map[string]Handler
	// BatchSize is the items per batch; zero is DefaultBatchSize.
	BatchSize int
	Metrics   *Metrics
}

// Run works on task id until it finishes or budget has passed (finished is false: the
// caller runs it again later). An error leaves the task as its last committed batch
// left it; running it again resumes from there.
func (r *Runner) Run(ctx context.Context, id uuid.UUID, budget time.Duration) (finished bool, err error) {
	deadline := time.Now().Add(budget)
	for {
		fin, err := r.step(ctx, id)
		if err != nil || fin {
			return fin, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
	}
}

// step runs one batch of task id in one transaction with its progress.
func (r *Runner) step(ctx context.Context, id uuid.UUID) (finished bool, err error) {
	err = store.InTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		t, err := load(ctx, tx, id, true)
		if errors.Is(err, ErrNotFound) { // removed meanwhile (its project was deleted)
			finished = true
			return nil
		}
		if err != nil {
			return err
		}
		if Finished(t.State) {
			finished = true
			return nil
		}
		wasQueued := t.State == StateQueued
		if wasQueued {
			now := pgNow()
			t.State, t.StartedAt = StateRunning, &now
		}
		if t.CancelRequested {
			finished = true
			return r.finish(ctx, tx, t, StateCancelled)
		}
		var b Batch
		err = tx.RunInTx(ctx, nil, func(_ context.Context, sp bun.Tx) error {
			h, ok := r.Handlers[t.Kind]
			if !ok {
				return Fail("", "UNSUPPORTED", "this worker cannot run tasks of kind %s", t.Kind)
			}
			var err error
			b, err = h.Batch(ctx, sp, t, r.batchSize())
			return err
		})
		if f := (*Failure)(nil); errors.As(err, &f) {
			finished = true
			t.Failed++
			t.Errors = appendErrors(t.Errors, store.TaskError{Item: f.Item, Code: f.Code, Message: f.Message})
			return r.finish(ctx, tx, t, StateFailed)
		}
		if err != nil {
			return err
		}
		t.Cursor += b.Consumed
		t.Done += b.Consumed
		t.Failed += len(b.Errors)
		t.Errors = appendErrors(t.Errors, b.Errors...)
		r.Metrics.items(t.Kind, max(0, b.Consumed-len(b.Errors)), len(b.Errors))
		if b.Done {
			finished = true
			return r.finish(ctx, tx, t, StateSucceeded)
		}
		return r.save(ctx, tx, t, wasQueued)
	})
	return finished, err
}

// Abandon fails task id after its job's last attempt failed with cause: the task shows
// FAILED rather than RUNNING forever. What its batches committed stays.
func (r *Runner) Abandon(ctx context.Context, id uuid.UUID, cause error) error {
	return store.InTx(ctx, r.DB, func(ctx context.Context, tx bun.Tx) error {
		t, err := load(ctx, tx, id, true)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil || Finished(t.State) {
			return err
		}
		t.Failed++
		t.Errors = appendErrors(t.Errors, store.TaskError{Code: "INTERNAL_ERROR",
			Message: "the task stopped after repeated failures: " + cause.Error()})
		return r.finish(ctx, tx, t, StateFailed)
	})
}

func (r *Runner) batchSize() int {
	if r.BatchSize > 0 {
		return r.BatchSize
	}
	return DefaultBatchSize
}

// appendErrors keeps the first MaxErrors.
func appendErrors(have []store.TaskError, more ...store.TaskError) []store.TaskError {
	for _, e := range more {
		if len(have) >= MaxErrors {
			break
		}
		have = append(have, e)
	}
	return have
}

// finish ends t in state and pushes its last progress.
func (r *Runner) finish(ctx context.Context, tx bun.Tx, t *store.Task, state string) error {
	now := pgNow()
	t.State, t.FinishedAt = state, &now
	r.Metrics.finished(t.Kind, state)
	return r.save(ctx, tx, t, true)
}

// save writes t's progress and cursor, and pushes the progress to its creator when
// force is set or the last push is pushInterval past.
func (r *Runner) save(ctx context.Context, tx bun.Tx, t *store.Task, force bool) error {
	now := pgNow()
	push := force || t.PushedAt == nil || now.Sub(*t.PushedAt) >= pushInterval
	if push {
		t.PushedAt = &now
	}
	_, err := tx.NewUpdate().Model(t).WherePK().
		// Not items: fixed when the task was queued, and a bulk change's 10,000 ids
		// would be written again with every batch.
		Column("state", "cursor", "state_data", "total", "done", "failed", "errors", "result_key",
			"result_name", "result_type", "pushed_at", "started_at", "finished_at").Exec(ctx)
	if err != nil {
		return fmt.Errorf("save task %s: %w", t.ID, err)
	}
	if !push {
		return nil
	}
	return Push(ctx, tx, t)
}

// Push sends t's progress to its creator's /user/queue/tasks when tx commits. The
// pushed view carries no errors (a notification holds under 8 kB); GET /tasks/{id} has
// them.
func Push(ctx context.Context, tx bun.IDB, t *store.Task) error {
	v := NewView(t)
	v.Errors = []store.TaskError{}
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("task push: %w", err)
	}
	return realtime.Publish(ctx, tx, realtime.Message{Destination: realtime.UserDestination(t.CreatedBy, realtime.TaskQueue), Body: body})
}

// pgNow is the time as Postgres stores it (microseconds), so a pushed view and a read
// one show the same instants.
func pgNow() time.Time { return time.Now().Truncate(time.Microsecond) }
