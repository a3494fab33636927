package store

import (
	"context"
	"time"

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

// ExpiredSQL selects the ids of up to ? (the second and third parameter) rows of table
// created more than ? seconds ago, per row of parents its oldest first: each parent's
// rows are read from the old end of its part of table's index on (fk, created_at DESC,
// id DESC), so table needs no index of its own on created_at, written with every row.
// table, parents and fk are SQL names of the caller's, never input.
func ExpiredSQL(table, parents, fk string) string {
	return `SELECT old.id FROM ` + parents + ` AS p CROSS JOIN LATERAL (
		SELECT id FROM ` + table + `
		WHERE ` + fk + ` = p.id AND created_at < now() - make_interval(secs => ?)
		ORDER BY created_at, id LIMIT ?) AS old
	LIMIT ?`
}

// DeleteExpired deletes the rows of table created more than retention ago (ExpiredSQL),
// batch per statement (DeleteInBatches), and returns how many it deleted.
func DeleteExpired(ctx context.Context, db bun.IDB, table, parents, fk string, retention time.Duration, batch int) (int64, error) {
	return DeleteInBatches(ctx, db, batch, "DELETE FROM "+table+" WHERE id IN ("+ExpiredSQL(table, parents, fk)+")",
		retention.Seconds(), batch, batch)
}
