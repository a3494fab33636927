package workers

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/idempotency"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// RateLimitCleanupArgs removes rate-limit hits older than the window, for client
// addresses that never came back to trigger their own cleanup.
type RateLimitCleanupArgs struct {
	Window time.Duration `json:"window"`
}

// Kind implements river.JobArgs.
func (RateLimitCleanupArgs) Kind() string { return "maintenance.rate_limit_cleanup" }

// RateLimitCleanupWorker runs RateLimitCleanupArgs.
type RateLimitCleanupWorker struct {
	river.WorkerDefaults[RateLimitCleanupArgs]
	DB *bun.DB
}

// Work implements river.Worker.
func (w *RateLimitCleanupWorker) Work(ctx context.Context, job *river.Job[RateLimitCleanupArgs]) error {
	_, err := w.DB.NewDelete().Table("rate_limit_hits").
		Where("hit_at < now() - make_interval(secs => ?)", job.Args.Window.Seconds()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("clean rate limit hits: %w", err)
	}
	return nil
}

// IdempotencyExpiryArgs deletes Idempotency-Key records past their 24 hours
// (docs/api-conventions.md#safe-retries).
type IdempotencyExpiryArgs struct{}

// Kind implements river.JobArgs.
func (IdempotencyExpiryArgs) Kind() string { return "maintenance.idempotency_expiry" }

// IdempotencyExpiryWorker runs IdempotencyExpiryArgs.
type IdempotencyExpiryWorker struct {
	river.WorkerDefaults[IdempotencyExpiryArgs]
	DB *bun.DB
}

// Work implements river.Worker.
func (w *IdempotencyExpiryWorker) Work(ctx context.Context, _ *river.Job[IdempotencyExpiryArgs]) error {
	_, err := idempotency.NewKeys(w.DB).Expire(ctx)
	return err
}

// ListChangeTrimArgs forgets the hour-old changes of cf filter terms and issues, and
// with them the API processes' kept lists read before them (issue.TrimListChanges).
type ListChangeTrimArgs struct{}

// Kind implements river.JobArgs.
func (ListChangeTrimArgs) Kind() string { return "maintenance.list_change_trim" }

// ListChangeTrimWorker runs ListChangeTrimArgs.
type ListChangeTrimWorker struct {
	river.WorkerDefaults[ListChangeTrimArgs]
	DB *store.DB
}

// Work implements river.Worker.
func (w *ListChangeTrimWorker) Work(ctx context.Context, _ *river.Job[ListChangeTrimArgs]) error {
	_, err := issue.TrimListChanges(ctx, w.DB.Pool)
	return err
}
