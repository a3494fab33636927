package store_test

import (
	"context"
	"errors"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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

// TestSessionsCompileNoJIT: every pool's sessions run with JIT compilation off
// (compiling cost more than any of our statements gains), unless the URL sets jit.
func TestSessionsCompileNoJIT(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		url  string
		want string
	}{{storetest.AdminURL(), "off"}, {withParam(storetest.AdminURL(), "jit=on"), "on"}} {
		for _, open := range []func(context.Context, string, int32) (*store.DB, error){store.Open, store.OpenWorker} {
			db, err := open(ctx, c.url, 2)
			require.NoError(t, err)
			for name, q := range map[string]func() (string, error){
				"pool":  func() (s string, err error) { err = db.Pool.QueryRow(ctx, "SHOW jit").Scan(&s); return },
				"keyed": func() (s string, err error) { err = db.Keyed.QueryRow(ctx, "SHOW jit").Scan(&s); return },
				"bun":   func() (s string, err error) { err = db.Bun.QueryRowContext(ctx, "SHOW jit").Scan(&s); return },
			} {
				got, err := q()
				require.NoError(t, err, name)
				require.Equal(t, c.want, got, "%s session of %s", name, c.url)
			}
			db.Close()
		}
	}
}

// withParam appends a query parameter to a connection URL.
func withParam(url, param string) string {
	if strings.Contains(url, "?") {
		return url + "&" + param
	}
	return url + "?" + param
}

// TestAPIStatementTimeout: an API pool's statements end at its statement timeout, in
// Postgres itself, as ErrUnavailable (503), and the connection serves the next
// statement; the migration pool has none, whatever the server's default.
func TestAPIStatementTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.OpenAPI(ctx, storetest.AdminURL(), 1, 200*time.Millisecond)
	require.NoError(t, err)
	defer db.Close()
	start := time.Now()
	_, err = db.Pool.Exec(ctx, "SELECT pg_sleep(5)")
	require.ErrorIs(t, store.Translate(err), store.ErrUnavailable)
	require.Less(t, time.Since(start), 4*time.Second, "ended by the server, long before the statement would")
	var setting string
	require.NoError(t, db.Pool.QueryRow(ctx, "SHOW statement_timeout").Scan(&setting))
	require.Equal(t, "200ms", setting)
	require.NoError(t, db.SQL.QueryRowContext(ctx, "SHOW statement_timeout").Scan(&setting), "bun and River's inserter share it")
	require.Equal(t, "200ms", setting)

	mig, err := store.OpenMigrator(ctx, withParam(storetest.AdminURL(), "options=-c%20statement_timeout%3D100"))
	require.NoError(t, err)
	defer mig.Close()
	require.NoError(t, mig.QueryRow(ctx, "SHOW statement_timeout").Scan(&setting))
	require.Equal(t, "0", setting)
}

// TestHeldConnectionsServeWhilePostgresRefusesNew: while Postgres refuses new
// connections (53300, here a role's connection limit), a process pool that holds its
// connections (OpenAPI, OpenWorker) serves every request with them; a pool that grows
// on demand (pgxpool's default) fails requests that would open one.
func TestHeldConnectionsServeWhilePostgresRefusesNew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, err := storetest.CloneURL(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { storetest.Drop(url) })
	role := "tw_limited_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:8]
	admin, err := pgx.Connect(ctx, storetest.AdminURL())
	require.NoError(t, err)
	defer admin.Close(ctx)
	_, err = admin.Exec(ctx, "CREATE ROLE "+role+" LOGIN CONNECTION LIMIT 3")
	require.NoError(t, err)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), storetest.AdminURL())
		if err == nil {
			_, _ = c.Exec(context.Background(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", role)
			_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+role)
			c.Close(context.Background())
		}
	})
	u, err := neturl.Parse(url)
	require.NoError(t, err)
	u.User = neturl.User(role) // trust authentication, as the test server has
	roleURL := u.String()

	burst := func(db *store.DB) (failed int, refused bool) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := db.Pool.Exec(ctx, "SELECT pg_sleep(0.02)")
				if err != nil {
					mu.Lock()
					failed++
					refused = refused || errors.Is(store.Translate(err), store.ErrUnavailable)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return failed, refused
	}

	held, err := store.OpenAPI(ctx, roleURL, 3, 0)
	require.NoError(t, err)
	defer held.Close()
	// Held means established: TotalConns counts connections still being made, which a
	// loaded machine may not have finished before the lazy pool below takes the slots.
	require.Eventually(t, func() bool {
		var open int
		require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE usename = $1", role).Scan(&open))
		return held.Pool.Stat().IdleConns() == 3 && open == 3
	}, 10*time.Second, 10*time.Millisecond, "the pool opens and holds its connections")
	// The role's three connections are taken: Postgres refuses any other.
	lazy, err := store.Open(ctx, roleURL, 3)
	require.NoError(t, err)
	defer lazy.Close()
	failed, refused := burst(lazy)
	require.Equal(t, 40, failed, "a pool that must open connections fails every request")
	require.True(t, refused, "with 53300, answered as unavailable (503)")
	lazy.Close()

	failed, _ = burst(held)
	require.Zero(t, failed, "the held connections serve every request")
}
