package workers

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/taskweave/taskweave/store"
)

// VacuumTables are the tables whose visibility map the issue list depends on: a page's
// keys are found by index-only scans of issues (and, for cf equalities in key order, of
// issue_filter_terms), and every entry on a heap page the map does not cover costs a
// read of that page (docs/performance.md#fresh-rows).
var VacuumTables = []string{"issues", "issue_filter_terms"}

// vacuumLockKey is the session advisory lock a look holds, so that of several worker
// processes one looks and vacuums at a time (the others skip that tick).
const vacuumLockKey = 7_305_419_311

// vacuumDue is, per table, whether autovacuum's own rule would vacuum it now: the
// table's thresholds (its reloptions, set by migration 0035, else the server's settings)
// against the changes the statistics system counted since the last vacuum. It is the
// rule autovacuum applies, only looked at every few seconds instead of once per
// autovacuum_naptime (60 s, a server setting). Analyzing is left to autovacuum: the list
// needs the map promptly, not the statistics, and an analyze of a large table reads a
// sample of 30,000 pages (1–3 s on the 250,000-issue instance), which every few seconds
// under a steady write load costs the writers (docs/operations.md#vacuum).
const vacuumDue = `WITH t AS (
	SELECT c.relname, greatest(c.reltuples, 0) AS tuples, s.n_dead_tup, s.n_ins_since_vacuum,
		(SELECT jsonb_object_agg(option_name, option_value) FROM pg_options_to_table(c.reloptions)) AS o
	FROM pg_class AS c
	JOIN pg_stat_user_tables AS s ON s.relid = c.oid
	WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1)
), o AS (
	SELECT relname, tuples, n_dead_tup, n_ins_since_vacuum, o->>'autovacuum_enabled' AS enabled,
		coalesce(o->>'autovacuum_vacuum_threshold', current_setting('autovacuum_vacuum_threshold'))::float8 AS vt,
		coalesce(o->>'autovacuum_vacuum_scale_factor', current_setting('autovacuum_vacuum_scale_factor'))::float8 AS vs,
		coalesce(o->>'autovacuum_vacuum_insert_threshold',
			current_setting('autovacuum_vacuum_insert_threshold'))::float8 AS it,
		coalesce(o->>'autovacuum_vacuum_insert_scale_factor',
			current_setting('autovacuum_vacuum_insert_scale_factor'))::float8 AS "is"
	FROM t
)
SELECT quote_ident(relname)
FROM o
WHERE enabled IS DISTINCT FROM 'false'
	AND (n_dead_tup > vt + vs * tuples OR (it >= 0 AND n_ins_since_vacuum > it + "is" * tuples))
ORDER BY relname`

// Vacuumer keeps the visibility map of VacuumTables current within seconds of a burst
// of writes. Autovacuum applies the same thresholds, but its launcher visits a database
// only every autovacuum_naptime (60 s by default): for up to a minute after a burst of
// creates, every index-only scan over the burst's pages reads the heap. Each look is one
// query on the statistics views; a vacuum it runs reads only the pages the map does not
// mark all-visible (docs/operations.md#vacuum).
type Vacuumer struct {
	DB  *store.DB
	Log *slog.Logger
	// Interval is TW_VACUUM_INTERVAL; 0 or less: Run does nothing (autovacuum alone).
	Interval time.Duration
}

// Run looks every Interval until ctx ends. An error of one look is logged, not returned:
// autovacuum still runs, later.
func (v *Vacuumer) Run(ctx context.Context) error {
	if v.Interval <= 0 {
		return nil
	}
	t := time.NewTicker(v.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := v.Once(ctx); err != nil && ctx.Err() == nil {
			v.Log.Warn("vacuum look failed", "err", err)
		}
	}
}

// Once looks once and runs VACUUM on each table that is due, under the advisory lock (another process's look in progress: nothing this time). It
// returns the statements run.
func (v *Vacuumer) Once(ctx context.Context) ([]string, error) {
	conn, err := v.DB.Pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	var locked bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", vacuumLockKey).Scan(&locked); err != nil || !locked {
		return nil, err
	}
	defer func() {
		ctx := context.WithoutCancel(ctx)
		_, _ = conn.Exec(ctx, "RESET statement_timeout")
		_, _ = conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", vacuumLockKey)
	}()
	// In `all` the pool is the API's, whose sessions end a statement after
	// TW_STATEMENT_TIMEOUT: a vacuum of a large table may take longer. RESET returns the
	// session to its pool's own setting.
	if _, err := conn.Exec(ctx, "SET statement_timeout = 0"); err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, vacuumDue, VacuumTables)
	if err != nil {
		return nil, fmt.Errorf("vacuum: thresholds: %w", err)
	}
	todo, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("vacuum: thresholds: %w", err)
	}
	var ran []string
	for _, table := range todo {
		stmt := "VACUUM (SKIP_LOCKED) " + table
		start := time.Now()
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return ran, fmt.Errorf("%s: %w", strings.ToLower(stmt), err)
		}
		ran = append(ran, stmt)
		v.Log.Debug("vacuumed", "statement", stmt, "took", time.Since(start))
	}
	return ran, nil
}
