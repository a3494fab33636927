package workers

import (
	"context"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/jobs"
)

// AuditWorker writes the audit row a request enqueued.
type AuditWorker struct {
	river.WorkerDefaults[jobs.AuditRecord]
	DB *bun.DB
}

// Work implements river.Worker.
func (w *AuditWorker) Work(ctx context.Context, job *river.Job[jobs.AuditRecord]) error {
	return audit.Write(ctx, w.DB, job.Args)
}
