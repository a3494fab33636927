package automation

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// DefaultRetention is how long executions are kept when TW_AUTOMATION_RETENTION is
// not set.
const DefaultRetention = 90 * 24 * time.Hour

// CleanupBatch is how many executions one cleanup statement deletes, so pruning a
// large backlog never holds locks or bloats one transaction for long.
const CleanupBatch = 5000

// Cleanup deletes executions created more than retention ago, batch rows per
// statement (each its own transaction), until none is left or ctx ends, and returns
// how many it deleted; then the limits' old rows (spent chain budgets, rate windows).
func Cleanup(ctx context.Context, db bun.IDB, retention time.Duration, batch int) (int64, error) {
	if batch <= 0 {
		batch = CleanupBatch
	}
	// Each rule's oldest executions come from the old end of its part of the log index
	// (rule_id, created_at DESC, id DESC).
	n, err := store.DeleteExpired(ctx, db, "automation_executions", "automation_rules", "rule_id", retention, batch)
	if err != nil {
		return n, fmt.Errorf("clean automation executions: %w", err)
	}
	// SEND_WEBHOOK requests are kept as long.
	if _, err := store.DeleteExpired(ctx, db, "automation_webhook_deliveries", "automation_rules", "rule_id", retention, batch); err != nil {
		return n, fmt.Errorf("clean automation web requests: %w", err)
	}
	return n, cleanLimits(ctx, db)
}
