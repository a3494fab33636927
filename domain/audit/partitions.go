package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// The audit log is partitioned by month on "timestamp" (migration 0045,
// docs/operations.md#audit-partitions): one partition audit_events_pYYYY_MM per UTC
// month [first day, first day of the next), and audit_events_default for a row whose
// month has none. The daily maintenance job (workers/audit_worker.go) creates the
// months ahead and drops the months past the retention.

// MonthsAhead is how many months after the current one keep a partition ready, so the
// default partition only catches rows when the worker was down that long.
const MonthsAhead = 3

// partitionLockTimeout bounds how long creating or dropping a partition waits for its
// lock on the parent, which writers would queue behind; the job retries later.
const partitionLockTimeout = "1s"

// PartitionName is the partition of month (any instant of it, read in UTC).
func PartitionName(month time.Time) string {
	return "audit_events_p" + monthStart(month).Format("2006_01")
}

func monthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// parent is the partitioned audit table: audit_events, or audit_events_new while the
// migrate command has not yet finished copying the log of a release before 0045 into it.
func parent(ctx context.Context, db bun.IDB) (string, error) {
	var name string
	err := db.QueryRowContext(ctx, `SELECT c.relname FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid
		WHERE c.relname IN ('audit_events', 'audit_events_new') AND c.relnamespace = current_schema()::regnamespace
		ORDER BY c.relname DESC LIMIT 1`).Scan(&name)
	if err != nil {
		return "", fmt.Errorf("find the partitioned audit table: %w", err)
	}
	return name, nil
}

// EnsurePartitions creates the partitions of the month of now and of the MonthsAhead
// months after it that do not exist yet, and returns the names it created. A month
// for which the default partition already holds rows is skipped (creating it would
// have to move them); its rows stay in the default partition, read like any other.
func EnsurePartitions(ctx context.Context, db bun.IDB, now time.Time) ([]string, error) {
	table, err := parent(ctx, db)
	if err != nil {
		return nil, err
	}
	var created []string
	for i := 0; i <= MonthsAhead; i++ {
		from := monthStart(now).AddDate(0, i, 0)
		to := from.AddDate(0, 1, 0)
		name := PartitionName(from)
		var exists, caught bool
		if err := db.QueryRowContext(ctx, `SELECT to_regclass(?) IS NOT NULL,
				EXISTS (SELECT 1 FROM audit_events_default WHERE "timestamp" >= ? AND "timestamp" < ?)`,
			name, from, to).Scan(&exists, &caught); err != nil {
			return created, fmt.Errorf("audit partition %s: %w", name, err)
		}
		if exists || caught {
			continue
		}
		err := inLockTimeout(ctx, db, fmt.Sprintf(`CREATE TABLE %s PARTITION OF %s FOR VALUES FROM ('%s') TO ('%s')`,
			name, table, from.Format(time.RFC3339), to.Format(time.RFC3339)))
		if err != nil {
			return created, fmt.Errorf("create audit partition %s: %w", name, err)
		}
		created = append(created, name)
	}
	return created, nil
}

// DropExpired drops the monthly partitions whose whole month ended more than
// retention before now, and returns their names. A month partly inside the retention
// is kept whole until its last row expires: rows are never deleted one by one, so a
// row lives between retention and retention plus a month. Zero or less keeps every
// month. The default partition is never dropped.
func DropExpired(ctx context.Context, db bun.IDB, now time.Time, retention time.Duration) ([]string, error) {
	if retention <= 0 {
		return nil, nil
	}
	table, err := parent(ctx, db)
	if err != nil {
		return nil, err
	}
	// Partitions are listed with their bounds from the catalog, not parsed from names.
	rows, err := db.QueryContext(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = ?::regclass AND c.relname ~ '^audit_events_p[0-9]{4}_[0-9]{2}$'
		  AND (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz <= ?
		ORDER BY c.relname`, table, now.Add(-retention))
	if err != nil {
		return nil, fmt.Errorf("list expired audit partitions: %w", err)
	}
	var expired []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		expired = append(expired, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var dropped []string
	for _, name := range expired {
		if err := inLockTimeout(ctx, db, "DROP TABLE "+name); err != nil {
			return dropped, fmt.Errorf("drop audit partition %s: %w", name, err)
		}
		dropped = append(dropped, name)
	}
	return dropped, nil
}

// inLockTimeout runs one DDL statement in a transaction of its own whose lock waits end
// after partitionLockTimeout.
func inLockTimeout(ctx context.Context, db bun.IDB, stmt string) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '"+partitionLockTimeout+"'"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, stmt)
		return err
	})
}
