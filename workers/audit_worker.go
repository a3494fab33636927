package workers

import (
	"context"
	"time"

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

// AuditPartitionsWorker keeps the monthly partitions of the audit log: the months
// ahead exist before their first row, the months past the retention are dropped whole
// (docs/operations.md#audit-partitions).
type AuditPartitionsWorker struct {
	river.WorkerDefaults[jobs.AuditPartitions]
	DB  *bun.DB
	Now func() time.Time
}

// Work implements river.Worker.
func (w *AuditPartitionsWorker) Work(ctx context.Context, job *river.Job[jobs.AuditPartitions]) error {
	now := time.Now()
	if w.Now != nil {
		now = w.Now()
	}
	if _, err := audit.EnsurePartitions(ctx, w.DB, now); err != nil {
		return err
	}
	_, err := audit.DropExpired(ctx, w.DB, now, job.Args.Retention)
	return err
}

// addAuditWorkers registers the audit row writer and the partition maintenance, and
// returns the daily maintenance job (run at start too: a deploy after a long stop
// creates the current month's partition at once).
func addAuditWorkers(ws *river.Workers, cfg Config, d Deps) []*river.PeriodicJob {
	river.AddWorker(ws, &AuditWorker{DB: d.DB.Bun})
	river.AddWorker(ws, &AuditPartitionsWorker{DB: d.DB.Bun})
	return []*river.PeriodicJob{periodic("audit_partitions", 24*time.Hour, true, jobs.AuditPartitions{Retention: cfg.AuditRetention})}
}
