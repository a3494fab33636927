package webhook

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

const (
	timeout = 5 * time.Second
	tick    = 5 * time.Millisecond
)

// TestGroupAnswersEveryCallAndBatchesWhileBusy holds the first statement open until
// more calls have queued, then checks they ran together and each got its own answer.
func TestGroupAnswersEveryCallAndBatchesWhileBusy(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var (
		mu      sync.Mutex
		batches [][]int
	)
	g := &group[int, int]{fn: func(_ context.Context, in []int) ([]int, []error, error) {
		mu.Lock()
		first := len(batches) == 0
		batches = append(batches, append([]int(nil), in...))
		mu.Unlock()
		if first {
			<-release
		}
		out, errs := make([]int, len(in)), make([]error, len(in))
		for i, v := range in {
			out[i] = v * 10
			if v == 3 {
				errs[i] = errors.New("three")
			}
		}
		return out, errs, nil
	}}
	var wg sync.WaitGroup
	results := make([]int, 6)
	failures := make([]error, 6)
	call := func(v int) {
		defer wg.Done()
		results[v], failures[v] = g.do(v)
	}
	wg.Add(1)
	go call(0)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(batches) == 1 }, timeout, tick)
	for v := 1; v < 6; v++ {
		wg.Add(1)
		go call(v)
	}
	require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.queue) == 5 }, timeout, tick)
	close(release)
	wg.Wait()
	require.Len(t, batches, 2, "the five calls queued behind the first went in one statement")
	require.ElementsMatch(t, []int{1, 2, 3, 4, 5}, batches[1])
	for v := range 6 {
		if v == 3 {
			require.EqualError(t, failures[v], "three")
			continue
		}
		require.NoError(t, failures[v])
		require.Equal(t, v*10, results[v])
	}
}

// TestRecordBatchCountsEveryAttemptOfOneDelivery records two outcomes of the same
// delivery in one batch (a redelivery racing a retry): both attempts are counted.
func TestRecordBatchCountsEveryAttemptOfOneDelivery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	hookID := seedWebhook(t, db)
	var deliveryID uuid.UUID
	require.NoError(t, db.Pool.QueryRow(ctx, `INSERT INTO webhook_deliveries (id, webhook_id, event_type, payload)
		VALUES (gen_random_uuid(), $1, 'issue.created', '{}') RETURNING id`, hookID).Scan(&deliveryID))

	s := NewSender(db.Pool, Config{})
	status, failed := int32(500), "webhook receiver answered 500"
	okStatus := int32(200)
	_, _, err := s.recordBatch(ctx, []record{
		{id: store.UUID(deliveryID), status: &status, lastError: &failed},
		{id: store.UUID(deliveryID), status: &okStatus, ok: true},
	})
	require.NoError(t, err)
	var (
		attempts  int
		delivered bool
	)
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT attempt_count, delivered_at IS NOT NULL FROM webhook_deliveries WHERE id = $1",
		deliveryID).Scan(&attempts, &delivered))
	require.Equal(t, 2, attempts)
	require.True(t, delivered)
}

// TestBatchStatementsKeepUsingThePrimaryKey runs the grouped load and record a few
// times on a nearly empty delivery table, as a fresh worker does, then grows the table
// to 20,000 records without an ANALYZE and checks the same connection still reads and
// writes a batch without a sequential scan of it. With prepared statements the generic
// plan cached while the table was small kept scanning it, one full scan per batch,
// which halved the delivery rate in the bench.
func TestBatchStatementsKeepUsingThePrimaryKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	hookID := seedWebhook(t, db)
	deliveries := func(n int) [][16]byte {
		t.Helper()
		rows, err := db.Pool.Query(ctx, `INSERT INTO webhook_deliveries (id, webhook_id, event_type, payload)
			SELECT gen_random_uuid(), $1, 'issue.created', '{}' FROM generate_series(1, $2) RETURNING id`, hookID, n)
		require.NoError(t, err)
		var ids [][16]byte
		for rows.Next() {
			var id [16]byte
			require.NoError(t, rows.Scan(&id))
			ids = append(ids, id)
		}
		require.NoError(t, rows.Err())
		return ids
	}
	// One connection of the kind the workers' sender uses (store.DB.Keyed), so every
	// run reuses whatever that connection cached.
	cfg := db.Keyed.Config().Copy()
	cfg.MaxConns, cfg.MinConns = 1, 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	s := NewSender(pool, Config{})
	ok := int32(200)
	batch := func(ids [][16]byte) {
		t.Helper()
		_, errs, err := s.loadBatch(ctx, ids)
		require.NoError(t, err)
		for _, e := range errs {
			require.NoError(t, e)
		}
		recs := make([]record, len(ids))
		for i, id := range ids {
			recs[i] = record{id: id, status: &ok, ok: true}
		}
		_, _, err = s.recordBatch(ctx, recs)
		require.NoError(t, err)
	}
	// seqScans counts sequential scans of the table plus entries read from its list
	// index (webhook id, newest first). A load joined from the webhook side read that
	// index whole to intersect it with the batch in the bench (seen with auto_explain);
	// these statistics do not always lead the planner there, so this part of the check
	// guards rather than reproduces.
	seqScans := func() int64 {
		t.Helper()
		_, err := pool.Exec(ctx, "SELECT pg_stat_force_next_flush()")
		require.NoError(t, err)
		var n int64
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT t.seq_scan + i.idx_tup_read FROM pg_stat_user_tables AS t
			JOIN pg_stat_user_indexes AS i ON i.relid = t.relid AND i.indexrelname = 'webhook_deliveries_list'
			WHERE t.relid = 'webhook_deliveries'::regclass`).Scan(&n))
		return n
	}

	small := deliveries(3)
	for range 10 {
		batch(small)
	}
	// Statistics from when the table was small, as autovacuum leaves them on a fresh
	// database: the planner then believes a webhook has a few hundred deliveries.
	deliveries(200)
	_, err = db.Pool.Exec(ctx, "ANALYZE webhooks, webhook_deliveries")
	require.NoError(t, err)
	big := deliveries(20000)
	before := seqScans()
	for i := range 5 {
		batch(big[i*40 : i*40+40])
	}
	// The pool connection's counters reach the shared statistics when it flushes them.
	var after int64
	require.Eventually(t, func() bool { after = seqScans(); return after >= before }, timeout, tick)
	require.Equal(t, before, after, "sequential scans of webhook_deliveries and list-index reads during five batches")
}

// TestKeyedSessionsNeverPlanASequentialScan: the generic plans of the sender's batch
// statements, made on an almost empty delivery table, scan it sequentially in an
// ordinary session and use the primary key in a session of store.DB.Keyed, whose
// cached plans therefore stay right as the table grows.
func TestKeyedSessionsNeverPlanASequentialScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	seedWebhook(t, db)
	_, err := db.Pool.Exec(ctx, "ANALYZE webhooks, webhook_deliveries")
	require.NoError(t, err)
	plans := func(pool *pgxpool.Pool) (seq []string) {
		t.Helper()
		conn, err := pool.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan")
		require.NoError(t, err)
		defer func() { _, _ = conn.Exec(ctx, "RESET plan_cache_mode") }()
		for name, stmt := range map[string]string{"load": loadSQL, "record": recordSQL} {
			_, err := conn.Conn().Prepare(ctx, "plan_"+name, stmt)
			require.NoError(t, err)
			args := "'{}'"
			if name == "record" {
				args = "'{}', '{}', '{}', '{}', '{}', '{}'"
			}
			rows, err := conn.Query(ctx, "EXPLAIN EXECUTE plan_"+name+"("+args+")", pgx.QueryExecModeSimpleProtocol)
			require.NoError(t, err)
			for rows.Next() {
				var line string
				require.NoError(t, rows.Scan(&line))
				if strings.Contains(line, "Seq Scan on webhook_deliveries") {
					seq = append(seq, name)
				}
			}
			require.NoError(t, rows.Err())
			_, err = conn.Exec(ctx, "DEALLOCATE plan_"+name)
			require.NoError(t, err)
		}
		slices.Sort(seq)
		return seq
	}
	require.Equal(t, []string{"load", "record"}, plans(db.Pool), "an ordinary session's generic plans scan the small table")
	require.Empty(t, plans(db.Keyed), "a keyed session's generic plans read by primary key")
}
