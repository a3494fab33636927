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

// oldDeliveriesSQL selects up to ? (the second and third parameter) delivery records
// created more than ? seconds ago, each webhook's oldest first, from the old end of its
// part of the list index.
const oldDeliveriesSQL = `SELECT old.id FROM webhooks AS w CROSS JOIN LATERAL (
		SELECT id FROM webhook_deliveries
		WHERE webhook_id = w.id AND created_at < now() - make_interval(secs => ?)
		ORDER BY created_at, id LIMIT ?) AS old
	LIMIT ?`

// Cleanup deletes delivery records created more than retention ago, batch rows per
// statement (each its own transaction), until none is left or ctx ends. It returns how
// many it deleted. Each webhook's oldest records are found from the old end of its part
// of the list index (webhook_id, created_at DESC, id DESC), so no index of its own on
// created_at has to be written with every delivery.
func Cleanup(ctx context.Context, db bun.IDB, retention time.Duration, batch int) (int64, error) {
	if batch <= 0 {
		batch = CleanupBatch
	}
	n, err := store.DeleteInBatches(ctx, db, batch, "DELETE FROM webhook_deliveries WHERE id IN ("+oldDeliveriesSQL+")",
		retention.Seconds(), batch, batch)
	if err != nil {
		return n, fmt.Errorf("clean webhook deliveries: %w", err)
	}
	return n, nil
}
