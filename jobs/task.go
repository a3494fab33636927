package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// QueueTasks runs tasks (bulk changes, exports, imports), so a long import never holds
// the workers of notifications or webhooks.
const QueueTasks = "tasks"

// Task job kinds, one per task type, so River's views and metrics tell them apart.
const (
	KindTaskBulkChange = "task.bulk_change"
	KindTaskExport     = "task.export"
	KindTaskImport     = "task.import"
	KindTaskUndo       = "task.undo"
)

// TaskRun works on task TaskID for one slice of time, then snoozes (or finishes). Its
// progress lives in the tasks row, so any attempt, on any worker, resumes where the
// last committed batch left off.
type TaskRun struct {
	TaskID uuid.UUID `json:"taskId"`
	// Type is the task's kind; Kind() derives the River kind from it.
	Type string `json:"type"`
}

// TaskBulkChange, TaskExport, TaskImport and TaskUndo are TaskRun under the River kind
// of each task type.
type (
	TaskBulkChange struct{ TaskRun }
	TaskExport     struct{ TaskRun }
	TaskImport     struct{ TaskRun }
	TaskUndo       struct{ TaskRun }
)

// Kind implements river.JobArgs.
func (TaskBulkChange) Kind() string { return KindTaskBulkChange }

// Kind implements river.JobArgs.
func (TaskExport) Kind() string { return KindTaskExport }

// Kind implements river.JobArgs.
func (TaskImport) Kind() string { return KindTaskImport }

// Kind implements river.JobArgs.
func (TaskUndo) Kind() string { return KindTaskUndo }

// InsertOpts puts tasks on their own queue. A failed attempt is retried (the batch it
// was in rolled back); the task is FAILED after the last one.
func (TaskRun) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueTasks, MaxAttempts: 5}
}

// Task returns the run itself, for a worker of any of the kinds above.
func (r TaskRun) Task() TaskRun { return r }

// TaskCleanup deletes the tasks (and their results) finished more than Retention ago.
type TaskCleanup struct {
	Retention time.Duration `json:"retention"`
}

// Kind implements river.JobArgs.
func (TaskCleanup) Kind() string { return "task.cleanup" }

// InsertOpts puts the cleanup with the tasks.
func (TaskCleanup) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: QueueTasks} }
