package webhook_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

func TestCleanupDeletesOnlyOldRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t) // a database of its own: cleanup spans every webhook
	first, second := webhook.SeedWebhook(t, db), webhook.SeedWebhook(t, db)
	// The first webhook: 7 records of 40 days, 3 of 29 days, 2 fresh; the second: 4 of
	// 31 days and 1 fresh.
	_, err := db.Pool.Exec(ctx, `INSERT INTO webhook_deliveries (id, webhook_id, event_type, payload, created_at)
		SELECT gen_random_uuid(), $1::uuid, 'issue.created', '{}', now() - make_interval(days => d)
		FROM unnest(ARRAY[40,40,40,40,40,40,40,29,29,29,0,0]) AS d
		UNION ALL
		SELECT gen_random_uuid(), $2::uuid, 'issue.created', '{}', now() - make_interval(days => d)
		FROM unnest(ARRAY[31,31,31,31,0]) AS d`, first, second)
	require.NoError(t, err)

	// Batches of 3 must still clear all 11 old records, across both webhooks.
	n, err := webhook.Cleanup(ctx, db.Bun, 30*24*time.Hour, 3)
	require.NoError(t, err)
	require.EqualValues(t, 11, n)
	rows, err := db.Pool.Query(ctx, `SELECT webhook_id, count(*), count(*) FILTER (WHERE created_at < now() - interval '30 days')
		FROM webhook_deliveries GROUP BY webhook_id`)
	require.NoError(t, err)
	left := map[uuid.UUID][2]int{}
	for rows.Next() {
		var (
			id       uuid.UUID
			all, old int
		)
		require.NoError(t, rows.Scan(&id, &all, &old))
		left[id] = [2]int{all, old}
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[uuid.UUID][2]int{first: {5, 0}, second: {1, 0}}, left)

	n, err = webhook.Cleanup(ctx, db.Bun, 30*24*time.Hour, 0)
	require.NoError(t, err)
	require.Zero(t, n)
}

// TestCleanupReadsTheListIndex: with no index of its own on created_at, the cleanup must
// still find old records through each webhook's part of the list index, not by reading
// the whole table (sequential scans are switched off so the small table cannot hide it).
func TestCleanupReadsTheListIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	webhook.SeedWebhook(t, db)
	conn, err := db.Bun.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "SET enable_seqscan = off")
	require.NoError(t, err)
	defer func() { _, _ = conn.ExecContext(ctx, "RESET enable_seqscan") }()
	var plan []string
	require.NoError(t, conn.NewRaw("EXPLAIN "+webhook.OldDeliveriesSQL, (30*24*time.Hour).Seconds(), 10, 10).Scan(ctx, &plan))
	require.Contains(t, strings.Join(plan, "\n"), "Scan Backward using webhook_deliveries_list")
}
