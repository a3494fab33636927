// Package store owns the connection to Postgres: one pgx pool, bun on top of it, the
// transaction helper and the translation of Postgres errors.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// DB bundles the single pgx pool with the bun and database/sql views of it, so River's
// pgx driver and bun share connections and limits.
type DB struct {
	Pool *pgxpool.Pool
	SQL  *sql.DB
	Bun  *bun.DB
	// Keyed is a second pool (same URL and size) for statements that read and write
	// rows only by their keys, the webhook sender's batches: its sessions never plan a
	// sequential scan where an index serves (enable_seqscan=off), so a cached generic
	// plan made while the table was nearly empty still reads by key once it has grown.
	// Ordinary sessions would scan such a small table, and keep the plan. Its sessions
	// keep the plan cache (plan_cache_mode is never forced there). pgxpool connects
	// lazily, so a process that never uses it holds no connection for it.
	Keyed *pgxpool.Pool
}

// Open connects to url. maxConns of 0 keeps pgx's default.
func Open(ctx context.Context, url string, maxConns int32) (*DB, error) {
	cfg, err := poolConfig(url, maxConns)
	if err != nil {
		return nil, err
	}
	return OpenConfig(ctx, cfg)
}

// OpenWorker is Open for a worker process, whose sessions (Keyed's aside) plan every
// statement with its values (plan_cache_mode=force_custom_plan). A worker's statements
// are mostly River's on its queue table, whose size swings from empty to many thousands
// of rows within seconds: a prepared statement's generic plan, fixed while the table was small, kept
// scanning the whole table as it grew (a fresh database's delivery run read ~600,000
// river_job rows in sequential scans). They run a few dozen times a second, so planning
// each one costs little; the API, whose statements run thousands of times a second on
// tables that change size slowly, keeps the plan cache.
func OpenWorker(ctx context.Context, url string, maxConns int32) (*DB, error) {
	cfg, err := poolConfig(url, maxConns)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	holdConnections(cfg)
	return openConfig(ctx, cfg, true)
}

// OpenAPI is Open for a process that serves the API: every statement of its sessions
// ends after statementTimeout (Postgres' statement_timeout, answered as 57014 and
// translated to ErrUnavailable). The request deadline cancels a request's context, but
// a backend busy planning or scanning notices the client has gone only when it next
// writes to it; a statement timeout shorter than the deadline ends the work in
// Postgres itself, so no request holds a backend after its reply
// (docs/operations.md#statement-timeout). 0 leaves the server's setting.
func OpenAPI(ctx context.Context, url string, maxConns int32, statementTimeout time.Duration) (*DB, error) {
	cfg, err := poolConfig(url, maxConns)
	if err != nil {
		return nil, err
	}
	if statementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(statementTimeout.Milliseconds(), 10)
	}
	holdConnections(cfg)
	return OpenConfig(ctx, cfg)
}

// holdConnections makes a process's pool keep all of its connections open (MinConns =
// MaxConns, unless the URL's pool_min_conns says otherwise). pgxpool opens a connection
// when a request finds none idle and the pool is below its size, and a failure to open
// one fails that request, even though the connections it holds come free a moment
// later: while Postgres refused new connections (53300), an API whose pool grew on
// demand answered 503 to most requests. A pool that already holds its connections
// serves every request with them and only replaces broken or expired ones in the
// background (docs/operations.md#a-refusing-database). Tests, which open many small
// databases, keep pgxpool's lazy growth (Open).
func holdConnections(cfg *pgxpool.Config) {
	if cfg.MinConns == 0 {
		cfg.MinConns = cfg.MaxConns
	}
}

// OpenMigrator is a small pool for applying migrations, with no statement timeout
// whatever the server or URL sets: a migration may build an index on a large table.
func OpenMigrator(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := poolConfig(url, 4)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["statement_timeout"] = "0"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open migration pool: %w", err)
	}
	return pool, nil
}

func poolConfig(url string, maxConns int32) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	return cfg, nil
}

// OpenConfig connects with a prepared pool configuration (tests use it to cut the
// network under a running server).
func OpenConfig(ctx context.Context, cfg *pgxpool.Config) (*DB, error) {
	return openConfig(ctx, cfg, false)
}

// openConfig opens the pools; holdKeyed makes Keyed hold its connections as Pool does
// (the worker's: its deliveries load through Keyed, and a delivery that cannot get a
// connection while Postgres refuses new ones waits for the refusal to end). Elsewhere
// Keyed connects on demand, so a process that never uses it holds nothing for it.
func openConfig(ctx context.Context, cfg *pgxpool.Config, holdKeyed bool) (*DB, error) {
	// JIT compilation off unless the URL asks for it (docs/performance.md#jit-compilation-is-off). Postgres
	// compiles a statement whose estimated cost passes jit_above_cost; a few of ours
	// (the SLA scan, the issue list with cf filters) are estimated that high for the
	// rows they might read, yet read a few hundred by index, and compiling costs many
	// times their own work. No statement of Taskweave's runs long enough to win that
	// back.
	if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	kcfg := cfg.Copy()
	if !holdKeyed {
		kcfg.MinConns = 0
	}
	kcfg.ConnConfig.RuntimeParams["enable_seqscan"] = "off"
	delete(kcfg.ConnConfig.RuntimeParams, "plan_cache_mode")
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open pool: %w", err)
	}
	keyed, err := pgxpool.NewWithConfig(ctx, kcfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open keyed pool: %w", err)
	}
	sqldb := stdlib.OpenDBFromPool(pool)
	return &DB{Pool: pool, SQL: sqldb, Bun: bun.NewDB(sqldb, pgdialect.New()), Keyed: keyed}, nil
}

// Close releases every connection.
func (db *DB) Close() {
	_ = db.Bun.Close()
	db.Keyed.Close()
	db.Pool.Close()
}

// InTx runs fn in one transaction: rows and the River jobs they cause commit or roll
// back together. fn's error rolls everything back and is returned unchanged.
func InTx(ctx context.Context, db bun.IDB, fn func(ctx context.Context, tx bun.Tx) error) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return fn(ctx, tx)
	})
}
