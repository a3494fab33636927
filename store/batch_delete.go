package store

import (
	"context"

	"github.com/uptrace/bun"
)

// DeleteInBatches runs query, a DELETE of at most batch rows, again and again (each
// statement its own transaction) until one deletes fewer than batch rows or fails, and
// returns how many rows it deleted in all. Retention cleanups use it, so pruning a
// large backlog never holds locks or bloats one transaction for long.
func DeleteInBatches(ctx context.Context, db bun.IDB, batch int, query string, args ...any) (int64, error) {
	var total int64
	for {
		res, err := db.NewRaw(query, args...).Exec(ctx)
		if err != nil {
			return total, err
		}
		n, _ := res.RowsAffected()
		total += n
		if n < int64(batch) {
			return total, nil
		}
	}
}
