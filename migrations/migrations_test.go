package migrations_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/taskweave/taskweave/migrations"
)

// TestConcurrentApply starts two migrators on an empty database at once, as two replicas
// would: the advisory lock lets each migration apply exactly once and both succeed.
func TestConcurrentApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := emptyDB(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var g errgroup.Group
	for range 2 {
		g.Go(func() error {
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				return err
			}
			defer pool.Close()
			return migrations.Apply(ctx, pool, log)
		})
	}
	require.NoError(t, g.Wait())

	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	all, err := migrations.All()
	require.NoError(t, err)
	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM schema_migrations").Scan(&n))
	require.Equal(t, len(all), n)
	ok, err := migrations.Current(ctx, pool)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM audit_config").Scan(&n))
	require.Equal(t, 3, n, "seed rows inserted once")
	// A third run is a no-op.
	require.NoError(t, migrations.Apply(ctx, pool, log))
}
