package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// CleanupBatch is how many delivery records one cleanup statement deletes, so pruning a
// large backlog never holds locks or bloats one transaction for long.
const CleanupBatch = 5000

// Cleanup deletes delivery records created more than retention ago, batch rows per
// statement (each its own transaction), until none is left or ctx ends. It returns how
// many it deleted.
func Cleanup(ctx context.Context, db bun.IDB, retention time.Duration, batch int) (int64, error) {
	if batch <= 0 {
		batch = CleanupBatch
	}
	var total int64
	for {
		res, err := db.NewRaw(`DELETE FROM webhook_deliveries WHERE id IN (
				SELECT id FROM webhook_deliveries WHERE created_at < now() - make_interval(secs => ?)
				ORDER BY created_at LIMIT ?)`, retention.Seconds(), batch).Exec(ctx)
		if err != nil {
			return total, fmt.Errorf("clean webhook deliveries: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
		if n < int64(batch) {
			return total, nil
		}
	}
}
