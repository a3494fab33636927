package workers

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"
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
