package workers

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/integration"
	"github.com/taskweave/taskweave/jobs"
)

// addIntegrationWorkers registers the worker that parses incoming provider payloads and
// returns the periodic job that deletes old processed payloads.
func addIntegrationWorkers(ws *river.Workers, cfg Config, d Deps) []*river.PeriodicJob {
	river.AddWorker(ws, &IntegrationEventWorker{DB: d.DB.Bun})
	river.AddWorker(ws, &IncomingEventCleanupWorker{DB: d.DB.Bun})
	// Raw payloads are kept as long as outgoing delivery records (TW_WEBHOOK_RETENTION,
	// default 30 days): long enough to look into a reference that was or was not made,
	// and the references themselves stay.
	retention := cfg.Webhook.WithDefaults().Retention
	return []*river.PeriodicJob{periodic("incoming_event_cleanup", time.Hour, false, jobs.IncomingEventCleanup{Retention: retention})}
}

// IntegrationEventWorker turns a stored incoming event into issue references.
type IntegrationEventWorker struct {
	river.WorkerDefaults[jobs.IntegrationEvent]
	DB *bun.DB
}

// Work implements river.Worker.
func (w *IntegrationEventWorker) Work(ctx context.Context, job *river.Job[jobs.IntegrationEvent]) error {
	_, err := integration.Process(ctx, w.DB, job.Args.EventID)
	return err
}

// IncomingEventCleanupWorker runs jobs.IncomingEventCleanup.
type IncomingEventCleanupWorker struct {
	river.WorkerDefaults[jobs.IncomingEventCleanup]
	DB *bun.DB
}

// Work implements river.Worker.
func (w *IncomingEventCleanupWorker) Work(ctx context.Context, job *river.Job[jobs.IncomingEventCleanup]) error {
	if job.Args.Retention <= 0 {
		return fmt.Errorf("incoming event cleanup: retention %s is not positive", job.Args.Retention)
	}
	_, err := integration.DeleteProcessed(ctx, w.DB, job.Args.Retention)
	return err
}
