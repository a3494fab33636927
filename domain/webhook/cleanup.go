package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// CleanupBatch is how many delivery records one cleanup statement deletes, so pruning a
// large backlog never holds locks or bloats one transaction for long.
const CleanupBatch = 5000

// oldDeliveriesSQL selects the expired delivery records, each webhook's oldest first,
// from the old end of its part of the list index (webhook_id, created_at DESC, id DESC).
var oldDeliveriesSQL = store.ExpiredSQL("webhook_deliveries", "webhooks", "webhook_id")

// Cleanup deletes delivery records created more than retention ago, batch rows per
// statement (each its own transaction), until none is left or ctx ends. It returns how
// many it deleted.
func Cleanup(ctx context.Context, db bun.IDB, retention time.Duration, batch int) (int64, error) {
	if batch <= 0 {
		batch = CleanupBatch
	}
	n, err := store.DeleteExpired(ctx, db, "webhook_deliveries", "webhooks", "webhook_id", retention, batch)
	if err != nil {
		return n, fmt.Errorf("clean webhook deliveries: %w", err)
	}
	return n, nil
}
