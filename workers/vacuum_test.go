package workers_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store/storetest"
	"github.com/taskweave/taskweave/workers"
)

// TestVacuumerVacuumsWhatAutovacuumWould: the worker's vacuumer runs VACUUM on issues once more rows were inserted than migration 0035's thresholds allow (1,000 + 1 %),
// and then the table's pages are all-visible (an index-only scan of the project's
// entries fetches nothing from the heap); below the thresholds, after its own vacuum, or
// while another process holds its lock, it runs nothing (docs/performance.md#fresh-rows).
func TestVacuumerVacuumsWhatAutovacuumWould(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	// One connection inserts and flushes its statistics at once (they are otherwise
	// reported at most once a second), so the look sees them.
	conn, err := db.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, `
		INSERT INTO users (id, email, display_name) VALUES ('00000000-0000-0000-0000-000000000001', 'v@example.com', 'V');
		INSERT INTO projects (id, key, name, owner_id) VALUES ('00000000-0000-0000-0000-000000000002', 'VAC', 'V', '00000000-0000-0000-0000-000000000001');
		INSERT INTO workflows (id, name, project_id) VALUES ('00000000-0000-0000-0000-000000000003', 'W', '00000000-0000-0000-0000-000000000002');
		INSERT INTO workflow_statuses (id, workflow_id, name, category) VALUES
			('00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-000000000003', 'To Do', 'TODO')`)
	require.NoError(t, err)
	insert := func(from, to int) {
		t.Helper()
		_, err := conn.Exec(ctx, `INSERT INTO issues (project_id, number, key, title, status_id, reporter_id)
			SELECT '00000000-0000-0000-0000-000000000002', g, 'VAC-' || g, 'Issue ' || g,
				'00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-000000000001'
			FROM generate_series($1::int, $2::int) AS g`, from, to)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, "SELECT pg_stat_force_next_flush()")
		require.NoError(t, err)
		_, err = conn.Exec(ctx, "SELECT 1")
		require.NoError(t, err)
	}
	heapFetches := func() int {
		t.Helper()
		tx, err := db.Pool.Begin(ctx)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(ctx) }()
		_, err = tx.Exec(ctx, "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off")
		require.NoError(t, err)
		var plan []byte
		require.NoError(t, tx.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, COSTS OFF)
			SELECT count(*) FROM issues WHERE project_id = '00000000-0000-0000-0000-000000000002'`).Scan(&plan))
		var out []struct {
			Plan struct {
				Plans []struct {
					NodeType    string `json:"Node Type"`
					HeapFetches int    `json:"Heap Fetches"`
				} `json:"Plans"`
			} `json:"Plan"`
		}
		require.NoError(t, json.Unmarshal(plan, &out))
		require.Equal(t, "Index Only Scan", out[0].Plan.Plans[0].NodeType)
		return out[0].Plan.Plans[0].HeapFetches
	}
	v := &workers.Vacuumer{DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}

	insert(1, 500)
	ran, err := v.Once(ctx)
	require.NoError(t, err)
	require.Empty(t, ran, "500 inserts are below 1,000 + 1 %")

	insert(501, 1600)
	require.Equal(t, 1600, heapFetches(), "fresh rows: every entry's page read from the heap")

	// Another process's look in progress: this one does nothing.
	other, err := db.Pool.Acquire(ctx)
	require.NoError(t, err)
	_, err = other.Exec(ctx, "SELECT pg_advisory_lock(7305419311)")
	require.NoError(t, err)
	ran, err = v.Once(ctx)
	require.NoError(t, err)
	require.Empty(t, ran, "the lock is held elsewhere")
	_, err = other.Exec(ctx, "SELECT pg_advisory_unlock(7305419311)")
	require.NoError(t, err)
	other.Release()

	ran, err = v.Once(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"VACUUM (SKIP_LOCKED) issues"}, ran)
	require.Zero(t, heapFetches(), "after the vacuum, the map covers every page")

	ran, err = v.Once(ctx)
	require.NoError(t, err)
	require.Empty(t, ran, "nothing new since its own vacuum")
}
