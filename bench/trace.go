package main

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// statementStats counts the statements the server's pool sends, and how many of them
// had to be prepared (a statement cache miss costs a round trip and a plan).
type statementStats struct {
	queries, prepares atomic.Int64
}

type counts struct{ queries, prepares int64 }

func (s *statementStats) snapshot() counts {
	return counts{queries: s.queries.Load(), prepares: s.prepares.Load()}
}

func (c counts) minus(o counts) counts {
	return counts{queries: c.queries - o.queries, prepares: c.prepares - o.prepares}
}

func (s *statementStats) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	s.queries.Add(1)
	return ctx
}

func (s *statementStats) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (s *statementStats) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	s.prepares.Add(1)
	return ctx
}

func (s *statementStats) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}
