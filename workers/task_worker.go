package workers

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/task"
	"github.com/taskweave/taskweave/jobs"
)

// taskArgs is the job of one kind of task (jobs.TaskBulkChange, ...).
type taskArgs interface {
	river.JobArgs
	Task() jobs.TaskRun
}

// TaskWorker works on one task for a slice of its job's time, then snoozes its job so
// that it comes back (on this worker or another) and continues: a task of any length
// runs in jobs shorter than the job timeout, so River's rescuer never mistakes a long
// task for a dead worker's, and each run resumes from the cursor its last batch
// committed (task.Runner).
type TaskWorker[T taskArgs] struct {
	river.WorkerDefaults[T]
	Runner *task.Runner
	// Slice is how long one run keeps starting batches; timeout bounds the run.
	Slice   time.Duration
	timeout time.Duration
}

// Timeout implements river.Worker.
func (w *TaskWorker[T]) Timeout(*river.Job[T]) time.Duration { return w.timeout }

// Work implements river.Worker.
func (w *TaskWorker[T]) Work(ctx context.Context, job *river.Job[T]) error {
	id := job.Args.Task().TaskID
	finished, err := w.Runner.Run(ctx, id, w.Slice)
	if err != nil {
		if job.Attempt >= job.MaxAttempts {
			// The last attempt: the task shows FAILED rather than RUNNING for ever.
			if aerr := w.Runner.Abandon(context.WithoutCancel(ctx), id, err); aerr != nil {
				return errors.Join(err, aerr)
			}
		}
		return err
	}
	if !finished {
		return river.JobSnooze(0)
	}
	return nil
}

// TaskCleanupWorker runs jobs.TaskCleanup.
type TaskCleanupWorker struct {
	river.WorkerDefaults[jobs.TaskCleanup]
	Runner *task.Runner
}

// Work implements river.Worker.
func (w *TaskCleanupWorker) Work(ctx context.Context, job *river.Job[jobs.TaskCleanup]) error {
	_, err := task.Expire(ctx, w.Runner.DB, job.Args.Retention)
	return err
}

// NewTaskRunner builds the runner of every kind of task on the process's database and
// event bus (so a bulk change reaches every consumer a request's change reaches).
func NewTaskRunner(d Deps) *task.Runner {
	return &task.Runner{DB: d.DB.Bun, Metrics: task.NewMetrics(d.Registry), Handlers: map[string]task.Handler{
		task.KindBulkChange: &task.Bulk{Issues: issue.NewService(d.DB, d.Bus)},
		task.KindExport:     &task.Export{Attachments: d.Attachments},
		task.KindImport: &task.Import{Attachments: d.Attachments, Bus: d.Bus,
			Rules: automation.NewService(d.DB.Bun, audit.NewRecorder(d.Bus))},
		task.KindUndo: &task.Undo{Bus: d.Bus},
	}}
}

// ExportTimeout bounds one export (docs/tasks.md#limits).
const ExportTimeout = 30 * time.Minute

// addTaskWorkers registers the task kinds and the hourly retention cleanup.
func addTaskWorkers(ws *river.Workers, cfg Config, d Deps) []*river.PeriodicJob {
	runner := NewTaskRunner(d)
	timeout := cfg.JobTimeout
	slice := timeout / 3
	river.AddWorker(ws, &TaskWorker[jobs.TaskBulkChange]{Runner: runner, Slice: slice, timeout: timeout})
	// An export is one batch (its result is written in one transaction), so it gets a
	// timeout of its own; River's rescuer leaves a kind alone until its timeout passed.
	river.AddWorker(ws, &TaskWorker[jobs.TaskExport]{Runner: runner, Slice: slice, timeout: max(timeout, ExportTimeout)})
	river.AddWorker(ws, &TaskWorker[jobs.TaskImport]{Runner: runner, Slice: slice, timeout: timeout})
	river.AddWorker(ws, &TaskWorker[jobs.TaskUndo]{Runner: runner, Slice: slice, timeout: timeout})
	river.AddWorker(ws, &TaskCleanupWorker{Runner: runner})
	return []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(time.Hour), func() (river.JobArgs, *river.InsertOpts) {
			return jobs.TaskCleanup{Retention: task.Retention}, nil
		}, &river.PeriodicJobOpts{ID: "task_cleanup", RunOnStart: true}),
	}
}
