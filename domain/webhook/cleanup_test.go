package webhook_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

func TestCleanupDeletesOnlyOldRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t) // a database of its own: cleanup spans every webhook
	webhookID := webhook.SeedWebhook(t, db)
	// 7 records of 40 days, 3 of 29 days, 2 fresh.
	_, err := db.Pool.Exec(ctx, `INSERT INTO webhook_deliveries (id, webhook_id, event_type, payload, created_at)
		SELECT gen_random_uuid(), $1, 'issue.created', '{}', now() - make_interval(days => d)
		FROM unnest(ARRAY[40,40,40,40,40,40,40,29,29,29,0,0]) AS d`, webhookID)
	require.NoError(t, err)

	// Batches of 3 must still clear all 7 old records.
	n, err := webhook.Cleanup(ctx, db.Bun, 30*24*time.Hour, 3)
	require.NoError(t, err)
	require.EqualValues(t, 7, n)
	var left, old int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE created_at < now() - interval '30 days')
		FROM webhook_deliveries`).Scan(&left, &old))
	require.Equal(t, 5, left)
	require.Zero(t, old)

	n, err = webhook.Cleanup(ctx, db.Bun, 30*24*time.Hour, 0)
	require.NoError(t, err)
	require.Zero(t, n)
}
