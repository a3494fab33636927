package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestPartitionMaintenance runs the daily job's two steps on months of their own (far
// from the months the migration created): the months ahead are created once, a month
// whose rows already sit in the default partition is left there, and the retention
// drops exactly the months that ended before it, whatever rows they hold, and nothing
// else.
func TestPartitionMaintenance(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		require.NoError(t, db.Pool.QueryRow(ctx, q, args...).Scan(&n))
		return n
	}
	insert := func(at string, n int) {
		t.Helper()
		_, err := db.Pool.Exec(ctx, `INSERT INTO audit_events (id, "timestamp", user_email, action, level)
			SELECT gen_random_uuid(), $1::timestamptz + i * interval '1 second', 'system', 'ISSUE_CREATED', 'WRITE'
			FROM generate_series(1, $2::int) AS i`, at, n)
		require.NoError(t, err)
	}
	partitionOf := func(at string) string {
		t.Helper()
		var name string
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT tableoid::regclass::text FROM audit_events WHERE "timestamp" = $1::timestamptz + interval '1 second'`, at).Scan(&name))
		return name
	}

	// A row of September 2030 before any partition of that month: the default takes it.
	insert("2030-09-10T00:00:00Z", 1)
	require.Equal(t, "audit_events_default", partitionOf("2030-09-10T00:00:00Z"))

	created, err := audit.EnsurePartitions(ctx, db.Bun, time.Date(2030, 5, 31, 23, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, []string{"audit_events_p2030_05", "audit_events_p2030_06", "audit_events_p2030_07", "audit_events_p2030_08"}, created)
	created, err = audit.EnsurePartitions(ctx, db.Bun, time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Empty(t, created, "a second run creates nothing")
	// September's row is in the default partition: its month is skipped, later ones made.
	created, err = audit.EnsurePartitions(ctx, db.Bun, time.Date(2030, 8, 20, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, []string{"audit_events_p2030_10", "audit_events_p2030_11"}, created)

	// Rows go to their month; the bounds are UTC months, the upper one exclusive.
	// (insert stamps its rows one second after the instant given, and on.)
	insert("2030-05-31T23:59:00Z", 10) // May 31, 23:59:01 to :10
	insert("2030-06-30T23:59:58Z", 1)  // 23:59:59 is still June
	insert("2030-06-30T23:59:59Z", 1)  // midnight is July
	insert("2030-07-15T00:00:00Z", 3)
	require.Equal(t, "audit_events_p2030_05", partitionOf("2030-05-31T23:59:00Z"))
	require.Equal(t, "audit_events_p2030_06", partitionOf("2030-06-30T23:59:58Z"))
	require.Equal(t, "audit_events_p2030_07", partitionOf("2030-06-30T23:59:59Z"))
	require.Equal(t, []int{10, 1, 4}, []int{count("SELECT count(*) FROM audit_events_p2030_05"),
		count("SELECT count(*) FROM audit_events_p2030_06"), count("SELECT count(*) FROM audit_events_p2030_07")})

	// Zero retention keeps everything.
	dropped, err := audit.DropExpired(ctx, db.Bun, time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC), 0)
	require.NoError(t, err)
	require.Empty(t, dropped)

	// 30 days on August 1st: the cutoff is July 2nd, so May and June ended before it and
	// go; July (its rows are older than 30 days but the month is not over) stays.
	before := count("SELECT count(*) FROM audit_events")
	dropped, err = audit.DropExpired(ctx, db.Bun, time.Date(2030, 8, 1, 0, 0, 0, 0, time.UTC), 30*24*time.Hour)
	require.NoError(t, err)
	// (The months the migration made when the test template was built ended before too.)
	require.Subset(t, dropped, []string{"audit_events_p2030_05", "audit_events_p2030_06"})
	for _, name := range dropped {
		require.Less(t, name, "audit_events_p2030_07", "only months that ended before the cutoff")
	}
	require.Equal(t, before-11, count("SELECT count(*) FROM audit_events"))
	require.Equal(t, 4, count(`SELECT count(*) FROM audit_events WHERE "timestamp" >= '2030-07-01' AND "timestamp" < '2030-08-01'`))
	require.Zero(t, count("SELECT count(*) FROM pg_class WHERE relname IN ('audit_events_p2030_05', 'audit_events_p2030_06')"))
	require.Equal(t, 1, count("SELECT count(*) FROM audit_events_default WHERE \"timestamp\" >= '2030-09-01'"), "the default partition is never dropped")

	// Rows stay immutable on a partition created by the job.
	_, err = db.Pool.Exec(ctx, "UPDATE audit_events_p2030_07 SET action = 'X'")
	require.ErrorContains(t, err, "audit events are immutable")
	_, err = db.Pool.Exec(ctx, "DELETE FROM audit_events WHERE \"timestamp\" >= '2030-07-01'")
	require.ErrorContains(t, err, "audit events are immutable")

	// Every month expires under a later cutoff; the default partition still stays.
	_, err = audit.DropExpired(ctx, db.Bun, time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC), 24*time.Hour)
	require.NoError(t, err)
	require.Zero(t, count("SELECT count(*) FROM pg_inherits WHERE inhparent = 'audit_events'::regclass AND inhrelid <> 'audit_events_default'::regclass"))
	require.Equal(t, 1, count("SELECT count(*) FROM audit_events"))
}
