package apitest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// QueryCounter counts every statement sent to Postgres (bun's and pgx's alike).
type QueryCounter struct{ N atomic.Int64 }

// TraceQueryStart counts one statement.
func (q *QueryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	q.N.Add(1)
	return ctx
}

// TraceQueryEnd is part of pgx.QueryTracer.
func (q *QueryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// CountingHarness is a harness on a fresh database whose every statement is counted.
func CountingHarness(t testing.TB) (*Harness, *QueryCounter) {
	t.Helper()
	counter := &QueryCounter{}
	return TracedHarness(t, counter), counter
}

// TracedHarness is a harness on a fresh database whose every statement goes through
// tracer.
func TracedHarness(t testing.TB, tracer pgx.QueryTracer) *Harness {
	t.Helper()
	ctx := context.Background()
	url, err := storetest.CloneURL(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { storetest.Drop(url) })
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	cfg.ConnConfig.Tracer = tracer
	db, err := store.OpenConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	return New(t, Options{DB: db})
}
