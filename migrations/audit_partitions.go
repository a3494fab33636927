package migrations

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// AuditConversion tunes the copy that finishes migration 0045: the rows of the old
// audit_events move into the partitioned audit_events_new in batches, each its own
// transaction, then one short transaction swaps the names (docs/operations.md#audit-partitions).
type AuditConversion struct {
	// Batch is the number of rows copied per transaction (default 20,000).
	Batch int
	// LockTimeout bounds the wait of the swap for its lock on audit_events, and so how
	// long a writer queued behind it can wait (default 500 ms); the swap is retried.
	LockTimeout time.Duration
	// Attempts is how many times the swap tries to get its lock (default 20).
	Attempts int
}

func (c AuditConversion) withDefaults() AuditConversion {
	if c.Batch <= 0 {
		c.Batch = 20_000
	}
	if c.LockTimeout <= 0 {
		c.LockTimeout = 500 * time.Millisecond
	}
	if c.Attempts <= 0 {
		c.Attempts = 20
	}
	return c
}

// auditConversionPending reports whether migration 0045 left a copy to finish.
func auditConversionPending(ctx context.Context, conn *pgx.Conn) (bool, error) {
	var pending bool
	err := conn.QueryRow(ctx, "SELECT to_regclass('audit_events_new') IS NOT NULL").Scan(&pending)
	return pending, err
}

// ConvertAuditLog finishes migration 0045 when it is pending, and does nothing
// otherwise; Apply runs it after the SQL migrations, under the migration lock. It can
// be interrupted at any point and run again: the copy skips rows already copied and
// the swap is one transaction.
//
// Writers are never blocked by the copy: each batch reads the old table (ACCESS SHARE)
// and inserts into the new one while the mirror trigger of 0045 copies every new row
// as it is written. Only the swap takes ACCESS EXCLUSIVE on audit_events, for the time
// of a few catalog changes, and gives up after LockTimeout (then retries) rather than
// queue writers behind a long wait.
func ConvertAuditLog(ctx context.Context, conn *pgx.Conn, log *slog.Logger, c AuditConversion) error {
	pending, err := auditConversionPending(ctx, conn)
	if err != nil || !pending {
		return err
	}
	c = c.withDefaults()
	start := time.Now()
	copied, err := copyAuditRows(ctx, conn, c.Batch)
	if err != nil {
		return err
	}
	log.Info("audit log copied into its partitioned table", "rows", copied, "elapsed", time.Since(start).String())
	for attempt := 1; ; attempt++ {
		err = swapAuditTables(ctx, conn, c.LockTimeout)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55P03" || attempt >= c.Attempts {
			break
		}
		log.Info("audit log swap waits for its lock; retrying", "attempt", attempt)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("migrate: swap the partitioned audit log in: %w", err)
	}
	log.Info("audit log partitioned by month", "elapsed", time.Since(start).String())
	return nil
}

// copyAuditRows copies every row of audit_events into audit_events_new, oldest first,
// batch rows per transaction, walking the time index by keyset ("timestamp", id). A
// row written behind the walk's position meanwhile was mirrored by the trigger.
func copyAuditRows(ctx context.Context, conn *pgx.Conn, batch int) (int64, error) {
	var total int64
	// The keyset starts before every row: -infinity and the zero uuid.
	lastTS := pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}
	lastID := pgtype.UUID{Valid: true}
	for {
		var (
			n  int64
			ts pgtype.Timestamptz
			id pgtype.UUID
		)
		// One statement per batch, so each batch is its own transaction.
		err := conn.QueryRow(ctx, `WITH batch AS (
				SELECT * FROM audit_events WHERE ("timestamp", id) > ($1, $2)
				ORDER BY "timestamp", id LIMIT `+strconv.Itoa(batch)+`),
			copied AS (INSERT INTO audit_events_new SELECT * FROM batch ON CONFLICT DO NOTHING)
			SELECT (SELECT count(*) FROM batch),
				(SELECT "timestamp" FROM batch ORDER BY "timestamp" DESC, id DESC LIMIT 1),
				(SELECT id FROM batch ORDER BY "timestamp" DESC, id DESC LIMIT 1)`, lastTS, lastID).Scan(&n, &ts, &id)
		if err != nil {
			return total, fmt.Errorf("migrate: copy audit rows: %w", err)
		}
		total += n
		if n < int64(batch) {
			return total, nil
		}
		lastTS, lastID = ts, id
	}
}

// swapAuditTables makes the partitioned table audit_events in one transaction: the
// old table is renamed away and dropped, the new one takes its name and its indexes
// the old names. The few rows written since the copy passed are already there
// (mirrored); the check below refuses the swap if any row were missing anyway.
func swapAuditTables(ctx context.Context, conn *pgx.Conn, lockTimeout time.Duration) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL lock_timeout = '%dms'", lockTimeout.Milliseconds())); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE audit_events, audit_events_new IN ACCESS EXCLUSIVE MODE"); err != nil {
			return err
		}
		// The newest rows of the old table (written while the copy ran) must all be in
		// the new one; an index walk of the last minutes, not a scan of the log.
		var missing int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM audit_events o
			WHERE o."timestamp" > now() - interval '10 minutes'
			  AND NOT EXISTS (SELECT 1 FROM audit_events_new n WHERE n.id = o.id AND n."timestamp" = o."timestamp")`).Scan(&missing); err != nil {
			return err
		}
		if missing > 0 {
			return fmt.Errorf("%d recent audit rows are missing from audit_events_new", missing)
		}
		for _, stmt := range []string{
			"DROP TRIGGER audit_events_mirror ON audit_events",
			"DROP FUNCTION audit_events_mirror()",
			"ALTER TABLE audit_events RENAME TO audit_events_legacy",
			"DROP TABLE audit_events_legacy",
			"ALTER TABLE audit_events_new RENAME TO audit_events",
			"ALTER TABLE audit_events RENAME CONSTRAINT audit_events_new_pkey TO audit_events_pkey",
			"ALTER INDEX audit_events_new_time RENAME TO audit_events_time",
			"ALTER INDEX audit_events_new_user_time RENAME TO audit_events_user_time",
			"ALTER INDEX audit_events_new_project_time RENAME TO audit_events_project_time",
			"ALTER INDEX audit_events_new_action_time RENAME TO audit_events_action_time",
			"ALTER INDEX audit_events_new_level_time RENAME TO audit_events_level_time",
		} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
		return nil
	})
}
