package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestWorkerSessionsPlanEveryStatement: a worker process's pool plans each statement
// with its values; the API's keeps Postgres's plan cache.
func TestWorkerSessionsPlanEveryStatement(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		open func(context.Context, string, int32) (*store.DB, error)
		want string
	}{{store.Open, "auto"}, {store.OpenWorker, "force_custom_plan"}} {
		db, err := c.open(ctx, storetest.AdminURL(), 2)
		require.NoError(t, err)
		var mode string
		require.NoError(t, db.Pool.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&mode))
		require.Equal(t, c.want, mode)
		require.NoError(t, db.SQL.QueryRowContext(ctx, "SHOW plan_cache_mode").Scan(&mode), "database/sql shares the pool")
		require.Equal(t, c.want, mode)
		db.Close()
	}
}
