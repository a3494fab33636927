package workers

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// storageMoveRun is how long one run of the move copies before it snoozes and lets the
// next run continue: each run stays well inside its Timeout, so River's rescuer never
// mistakes a live move for a stuck one, and a killed worker loses at most one file.
const storageMoveRun = 30 * time.Second

// StorageMigrateWorker moves the disk's attachment files to the bucket
// (attachment.Service.Move). Its progress (total, done, failed) is the job's output,
// written after every file, so /admin/jobs and River UI show it while it runs; a run
// that was stopped leaves it there and the next run continues behind it.
type StorageMigrateWorker struct {
	river.WorkerDefaults[jobs.StorageMigrate]
	DB    *store.DB
	Files *attachment.Stores
	Log   *slog.Logger
}

// Timeout bounds a run: storageMoveRun plus one file's copy and check.
func (w *StorageMigrateWorker) Timeout(*river.Job[jobs.StorageMigrate]) time.Duration {
	return storageMoveRun + time.Minute
}

// Work implements river.Worker.
func (w *StorageMigrateWorker) Work(ctx context.Context, job *river.Job[jobs.StorageMigrate]) error {
	var meta struct {
		Output attachment.MoveProgress `json:"output"`
	}
	_ = json.Unmarshal(job.Metadata, &meta)
	p := meta.Output
	svc := attachment.NewService(w.DB, nil, w.Files, w.Log)
	finished, err := svc.Move(ctx, &p, time.Now().Add(storageMoveRun), func(ctx context.Context, p attachment.MoveProgress) error {
		return writeOutput(ctx, w.DB, job.ID, p)
	})
	if err != nil {
		return err
	}
	if !finished {
		return river.JobSnooze(0)
	}
	w.Log.InfoContext(ctx, "attachments moved to the bucket", "total", p.Total, "done", p.Done, "failed", p.Failed)
	return river.RecordOutput(ctx, p)
}

// writeOutput puts v into the running job's output (River's metadata key "output",
// which River UI shows and /admin/jobs returns in metadata) before the job ends, which
// is when River itself records an output.
func writeOutput(ctx context.Context, db *store.DB, jobID int64, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = db.Pool.Exec(ctx, `UPDATE river_job SET metadata = metadata || jsonb_build_object('output', $2::jsonb)
		WHERE id = $1`, jobID, raw)
	return err
}

// addStorageWorkers registers the move where it can run: a process with both the
// disk and the bucket. It reports whether it did, so the queue is served only there.
func addStorageWorkers(ws *river.Workers, d Deps) bool {
	if d.Attachments == nil {
		return false
	}
	if _, err := d.Attachments.At(attachment.LocationDisk); err != nil {
		return false
	}
	if _, err := d.Attachments.At(attachment.LocationS3); err != nil {
		return false
	}
	river.AddWorker(ws, &StorageMigrateWorker{DB: d.DB, Files: d.Attachments, Log: d.Log})
	return true
}
