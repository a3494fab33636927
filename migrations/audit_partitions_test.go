package migrations_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/migrations"
)

// conversionRows is the size of the audit log TestAuditLogConversionUnderWrites
// converts: TW_AUDIT_CONVERSION_ROWS, 100,000 by default so `make test` stays short on
// a shared machine; docs/performance.md#audit-partitions gives the run at 1,000,000.
func conversionRows(t *testing.T) int {
	n := 100_000
	if s := os.Getenv("TW_AUDIT_CONVERSION_ROWS"); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(t, err, "TW_AUDIT_CONVERSION_ROWS")
		n = v
	}
	return n
}

// TestAuditLogConversionUnderWrites converts an audit log (conversionRows) written
// by the release before migration 0045 into the partitioned one while a writer keeps
// inserting rows the way the audit worker does: no row is lost or doubled, no insert
// waits more than a second, and the result is the partitioned audit_events with the
// old index names, its immutability and no trace of the conversion.
func TestAuditLogConversionUnderWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := emptyDB(t)
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.NoError(t, migrations.ApplyUpTo(ctx, pool, log, migrations.Options{}, 44))

	rows := conversionRows(t)
	seed := time.Now()
	// Two years of rows, a few with a user and a project (their references are kept), the
	// rest system rows; a thousand share one timestamp so a batch ends inside a tie.
	_, err = pool.Exec(ctx, `
		INSERT INTO users (id, email, display_name) VALUES ('00000000-0000-0000-0000-0000000000aa', 'a@example.com', 'A');
		INSERT INTO projects (id, key, name, owner_id) VALUES ('00000000-0000-0000-0000-0000000000bb', 'CV', 'P', '00000000-0000-0000-0000-0000000000aa')`)
	require.NoError(t, err)
	// The log is loaded without its secondary indexes, built again after: the same
	// table as the old release's, seeded in a fraction of the time.
	_, err = pool.Exec(ctx, `DROP INDEX audit_events_time, audit_events_user_time, audit_events_project_time,
		audit_events_action_time, audit_events_level_time`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO audit_events (id, "timestamp", user_id, user_email, project_id, action, level, details)
		SELECT gen_random_uuid(),
			CASE WHEN i <= 1000 THEN now() - interval '400 days'
			     ELSE now() - interval '730 days' + (i::float8 / $1) * interval '730 days' END,
			CASE WHEN i % 1000 = 0 THEN '00000000-0000-0000-0000-0000000000aa'::uuid END,
			'system', CASE WHEN i % 1000 = 0 THEN '00000000-0000-0000-0000-0000000000bb'::uuid END,
			'ISSUE_UPDATED', 'WRITE', '{"n":' || i || '}'
		FROM generate_series(1, $1::int) AS i`, rows)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `
		CREATE INDEX audit_events_time ON audit_events ("timestamp" DESC, id DESC);
		CREATE INDEX audit_events_user_time ON audit_events (user_id, "timestamp" DESC);
		CREATE INDEX audit_events_project_time ON audit_events (project_id, "timestamp" DESC);
		CREATE INDEX audit_events_action_time ON audit_events (action, "timestamp" DESC);
		CREATE INDEX audit_events_level_time ON audit_events (level, "timestamp" DESC, id DESC);
		ANALYZE audit_events`)
	require.NoError(t, err)
	t.Logf("seeded %d audit rows in %s", rows, time.Since(seed).Round(time.Millisecond))

	// The writer: one row per insert, as audit.Write sends it, until told to stop.
	var (
		written  []uuid.UUID
		slowest  atomic.Int64
		stop     = make(chan struct{})
		done     sync.WaitGroup
		writeErr error
	)
	done.Add(1)
	go func() {
		defer done.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			id := uuid.New()
			begin := time.Now()
			_, err := pool.Exec(ctx, `INSERT INTO audit_events (id, "timestamp", user_id, user_email, action, level)
				VALUES ($1, now(), (SELECT id FROM users WHERE id = '00000000-0000-0000-0000-0000000000aa'), 'a@example.com', 'LOGIN_SUCCESS', 'SECURITY')
				ON CONFLICT DO NOTHING`, id)
			if err != nil {
				writeErr = err
				return
			}
			written = append(written, id)
			if d := time.Since(begin); d.Nanoseconds() > slowest.Load() {
				slowest.Store(d.Nanoseconds())
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	time.Sleep(100 * time.Millisecond)
	convert := time.Now()
	require.NoError(t, migrations.ApplyWith(ctx, pool, log, migrations.Options{}))
	elapsed := time.Since(convert)
	time.Sleep(100 * time.Millisecond) // a few writes on the swapped table too
	close(stop)
	done.Wait()
	require.NoError(t, writeErr)
	t.Logf("converted %d rows in %s with %d concurrent inserts, slowest insert %s", rows, elapsed.Round(time.Millisecond),
		len(written), time.Duration(slowest.Load()).Round(time.Microsecond))
	require.Less(t, time.Duration(slowest.Load()), time.Second, "an insert waited for the conversion")
	require.Greater(t, len(written), 10)

	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		require.NoError(t, pool.QueryRow(ctx, q, args...).Scan(&n))
		return n
	}
	require.Equal(t, rows+len(written), count("SELECT count(*) FROM audit_events"), "every row once")
	require.Equal(t, len(written), count("SELECT count(*) FROM audit_events WHERE id = ANY($1)", written), "every concurrent write")
	require.Equal(t, rows, count("SELECT count(DISTINCT details) FROM audit_events WHERE action = 'ISSUE_UPDATED'"))
	require.Equal(t, rows/1000, count(`SELECT count(*) FROM audit_events WHERE user_id = '00000000-0000-0000-0000-0000000000aa'
		AND project_id = '00000000-0000-0000-0000-0000000000bb'`), "references kept")

	// The partitioned table under the old names, one partition per month, nothing left over.
	require.Equal(t, 1, count("SELECT count(*) FROM pg_partitioned_table WHERE partrelid = 'audit_events'::regclass"))
	require.GreaterOrEqual(t, count("SELECT count(*) FROM pg_inherits WHERE inhparent = 'audit_events'::regclass"), 25+3)
	require.Zero(t, count("SELECT count(*) FROM pg_class WHERE relname IN ('audit_events_new', 'audit_events_legacy')"))
	require.Zero(t, count("SELECT count(*) FROM pg_proc WHERE proname = 'audit_events_mirror'"))
	for _, index := range []string{"audit_events_pkey", "audit_events_time", "audit_events_user_time",
		"audit_events_project_time", "audit_events_action_time", "audit_events_level_time"} {
		require.Equal(t, 1, count("SELECT count(*) FROM pg_class WHERE relname = $1 AND relkind = 'I'", index), index)
	}
	require.Zero(t, count("SELECT count(*) FROM audit_events_default"), "every row has its month")

	// Rows stay immutable, through the parent and on a partition.
	_, err = pool.Exec(ctx, "UPDATE audit_events SET action = 'X' WHERE id = $1", written[0])
	require.ErrorContains(t, err, "audit events are immutable")
	var partition string
	require.NoError(t, pool.QueryRow(ctx, "SELECT tableoid::regclass::text FROM audit_events WHERE id = $1", written[0]).Scan(&partition))
	_, err = pool.Exec(ctx, "DELETE FROM "+partition)
	require.ErrorContains(t, err, "audit events are immutable")

	// A second run finds nothing to do.
	require.NoError(t, migrations.Apply(ctx, pool, log))
	require.Equal(t, rows+len(written), count("SELECT count(*) FROM audit_events"))
}
