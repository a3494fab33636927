package store_test

import (
	"context"
	"strings"
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
