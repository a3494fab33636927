// Package task runs long work (bulk changes, exports, imports) as River jobs with a row
// its creator can read: progress, per-item errors and the result. The row is also the
// work's cursor. Each batch of items commits with the advanced cursor in one
// transaction, so a worker killed mid-task loses nothing and the task resumes from its
// last committed batch without applying any item twice (docs/tasks.md).
package task

import (
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/store"
)

// Task states.
const (
	StateQueued    = "QUEUED"
	StateRunning   = "RUNNING"
	StateSucceeded = "SUCCEEDED"
	StateFailed    = "FAILED"
	StateCancelled = "CANCELLED"
)

// States lists every state, in the order of a task's life.
var States = []string{StateQueued, StateRunning, StateSucceeded, StateFailed, StateCancelled}

// Task kinds.
const (
	KindBulkChange = "BULK_CHANGE"
	KindExport     = "EXPORT"
	KindImport     = "IMPORT"
	KindUndo       = "UNDO"
)

// Limits (docs/tasks.md#limits).
const (
	// MaxErrors is how many item errors a task keeps; progress.failed counts them all.
	MaxErrors = 100
	// Retention is how long a finished task and its result are kept.
	Retention = 14 * 24 * time.Hour
	// pushInterval is the least time between two progress pushes of one task.
	pushInterval = 250 * time.Millisecond
)

// Errors of the task rules; api/ maps each to its status.
var (
	// ErrNotFound is an unknown task, or one the caller may not see.
	ErrNotFound = errors.New("task: not found")
	// ErrFinished is a change asked of a task that has finished.
	ErrFinished = errors.New("task: already finished")
	// ErrNoResult is a result asked of a task that has none (yet).
	ErrNoResult = errors.New("task: no result")
	// ErrNotUndoable is an undo of a task that created nothing undoable, or has not
	// failed or been cancelled.
	ErrNotUndoable = errors.New("task: cannot be undone")
)

// Finished reports whether state is one a task never leaves.
func Finished(state string) bool {
	return state == StateSucceeded || state == StateFailed || state == StateCancelled
}

// Progress is how far a task is: Done items worked through (Failed of them failed) of
// Total.
type Progress struct {
	Done   int `json:"done"`
	Total  int `json:"total"`
	Failed int `json:"failed"`
}

// View is a task as its readers see it, in the API's answer and the STOMP push alike.
type View struct {
	ID         uuid.UUID         `json:"id"`
	Kind       string            `json:"kind"`
	State      string            `json:"state"`
	Progress   Progress          `json:"progress"`
	CreatedBy  uuid.UUID         `json:"createdBy"`
	ProjectKey *string           `json:"projectKey"`
	CreatedAt  string            `json:"createdAt"`
	StartedAt  *string           `json:"startedAt"`
	FinishedAt *string           `json:"finishedAt"`
	Errors     []store.TaskError `json:"errors"`
	ResultURL  *string           `json:"resultUrl"`
}

// NewView renders t.
func NewView(t *store.Task) View {
	v := View{ID: t.ID, Kind: t.Kind, State: t.State, CreatedBy: t.CreatedBy, ProjectKey: t.ProjectKey,
		Progress:  Progress{Done: t.Done, Total: t.Total, Failed: t.Failed},
		CreatedAt: instant(t.CreatedAt), StartedAt: instantPtr(t.StartedAt), FinishedAt: instantPtr(t.FinishedAt),
		Errors: t.Errors}
	if v.Errors == nil {
		v.Errors = []store.TaskError{}
	}
	if t.ResultKey != nil && t.State == StateSucceeded {
		u := "/api/v1/tasks/" + t.ID.String() + "/result"
		v.ResultURL = &u
	}
	return v
}

func instant(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func instantPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := instant(*t)
	return &s
}
