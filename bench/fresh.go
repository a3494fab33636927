package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/taskweave/taskweave/store"
)

// targetFreshRatio: a random list page right after many creates serves at least this
// share of the requests per second it serves once the table is vacuumed.
const targetFreshRatio = 0.8

// freshResult is the fresh phase: the same random-page load right after the creates
// and after VACUUM (ANALYZE).
type freshResult struct {
	creates int
	created time.Duration
	// horizon is the oldest transaction open anywhere on the server right after the
	// creates: while it runs, no vacuum can mark the creates' pages all-visible.
	horizon string
	// vacuumEvery is the worker's TW_VACUUM_INTERVAL (0: its vacuumer off).
	vacuumEvery time.Duration
	// per list order: key order, then sort=updatedAt.
	orders         []string
	fresh, settled []result
	// explainFresh and explainSettled are an EXPLAIN ANALYZE of a count of the project's
	// issues: the heap fetches of an index-only scan over its entries.
	explainFresh, explainSettled string
}

// runFresh starts a `taskweave worker` process on the database, as production runs one
// beside the API (its vacuumer every vacuumEvery, TW_VACUUM_INTERVAL; 0 turns it off),
// creates n issues through the API in the bench's project (clients at a time), then at
// once measures GET /issues?size=50 at random pages for d each, in key order and in
// update order by turns of a second (so both start right after the creates), runs
// VACUUM (ANALYZE) on the tables the list reads, and measures the same loads again.
func runFresh(ctx context.Context, db *store.DB, dbURL string, c *client, s *seeded, clients, n int, d,
	vacuumEvery time.Duration) (freshResult, error) {
	r := freshResult{creates: n, vacuumEvery: vacuumEvery}
	if _, err := db.Pool.Exec(ctx, "VACUUM ANALYZE issues, issue_counts, projects, custom_field_values"); err != nil {
		return r, err
	}
	procs, err := startWorkers(ctx, 1, procEnv(dbURL, "TW_VACUUM_INTERVAL="+vacuumEvery.String()))
	if err != nil {
		return r, err
	}
	defer procs.stop()
	if err := procs.ready(ctx); err != nil {
		return r, err
	}
	post := c.post("/api/v1/projects/"+s.key+"/issues", s.token)
	start := time.Now()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := w; seq < n; seq += clients {
				if err := post(ctx, w, seq); err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	r.created = time.Since(start)
	if first != nil {
		return r, fmt.Errorf("fresh: create: %w", first)
	}
	base := "/api/v1/projects/" + s.key + "/issues?size=50"
	pages, err := c.totalPages(ctx, base, s.token)
	if err != nil {
		return r, err
	}
	r.orders = []string{"key order", "sort=updatedAt"}
	var random []op
	for _, q := range []string{"", "&sort=updatedAt"} {
		random = append(random, func(ctx context.Context, _, _ int) error {
			_, err := c.do(ctx, http.MethodGet, base+q+"&page="+strconv.Itoa(rand.IntN(max(pages, 1))), s.token, nil,
				http.StatusOK, false)
			return err
		})
	}
	r.explainFresh = heapFetches(ctx, db, s)
	r.horizon = oldestTransaction(ctx, db)
	r.fresh = loadEach(ctx, clients, d, random)
	if _, err := db.Pool.Exec(ctx, "VACUUM (ANALYZE) issues, issue_counts, projects, custom_field_values"); err != nil {
		return r, err
	}
	r.explainSettled = heapFetches(ctx, db, s)
	r.settled = loadEach(ctx, clients, d, random)
	return r, nil
}

// loadEach runs the ops' loads for d each, in turns of a second (one op at a time, all
// the clients), so that every op starts right after the creates and none competes with
// another for the machine; each op's results are summed over its turns.
func loadEach(ctx context.Context, clients int, d time.Duration, ops []op) []result {
	out := make([]result, len(ops))
	const turn = time.Second
	for done := time.Duration(0); done < d; done += turn {
		for i, o := range ops {
			r := load(ctx, clients, min(turn, d-done), o)
			out[i].latencies = append(out[i].latencies, r.latencies...)
			out[i].errors += r.errors
			out[i].elapsed += r.elapsed
			if out[i].firstErr == "" {
				out[i].firstErr = r.firstErr
			}
		}
	}
	for i := range out {
		slices.Sort(out[i].latencies)
	}
	return out
}

// oldestTransaction describes the oldest transaction with a transaction id open on the
// server, in any database. Every snapshot taken meanwhile, in every database, keeps its
// id as xmin, so a vacuum of the bench's database cannot mark rows written since then
// visible to all: another bench's long COPY on the same server turns the fresh phase
// into a measurement of that (docs/performance.md#fresh-rows).
func oldestTransaction(ctx context.Context, db *store.DB) string {
	var out string
	err := db.Pool.QueryRow(ctx, `SELECT coalesce((SELECT format('%s s old, in %s: %s', round(extract(epoch FROM now() - xact_start)),
			datname, left(regexp_replace(query, '\s+', ' ', 'g'), 60))
		FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()
		ORDER BY age(backend_xid) DESC LIMIT 1), 'none')`).Scan(&out)
	if err != nil {
		return err.Error()
	}
	return out
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// heapFetches sums the heap fetches of the index-only scans of the project's key
// order, as the list's dense check and its keys read them.
func heapFetches(ctx context.Context, db *store.DB, s *seeded) string {
	var out string
	err := db.Pool.QueryRow(ctx, `SELECT count(*) || ' issues; the settled visibility map covers ' ||
		(SELECT round(100.0 * relallvisible / greatest(relpages, 1)) FROM pg_class WHERE relname = 'issues') || '% of pages (as of the last VACUUM)'
		FROM issues WHERE project_id = $1`, s.projectID).Scan(&out)
	if err != nil {
		return err.Error()
	}
	rows, err := db.Pool.Query(ctx, `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, COSTS OFF)
		SELECT count(*) FROM issues WHERE project_id = $1`, s.projectID)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if rows.Scan(&line) == nil {
			out += "\n    " + line
		}
	}
	return out
}

// printFresh reports the fresh phase and its verdict.
func printFresh(r freshResult) {
	fmt.Println()
	fmt.Printf("fresh: %d issues created through the API in %s, then random list pages (size 50), both orders by turns of a second;"+
		" a worker process beside it, TW_VACUUM_INTERVAL=%s\n", r.creates, r.created.Round(time.Millisecond), r.vacuumEvery)
	fmt.Printf("%-56s %10s %8s %10s %10s\n", "GET /issues?size=50, random pages", "req/s", "errors", "p50", "p99")
	for i, order := range r.orders {
		for _, row := range []struct {
			name string
			res  result
		}{{"right after the creates", r.fresh[i]}, {"after VACUUM (ANALYZE)", r.settled[i]}} {
			fmt.Printf("%-56s %10.0f %8d %10s %10s\n", order+", "+row.name, row.res.rps(), row.res.errors, row.res.pct(50),
				row.res.pct(99))
		}
	}
	for i, order := range r.orders {
		ratio := r.fresh[i].rps() / max(r.settled[i].rps(), 1)
		fmt.Printf("%s: fresh/settled %.2f (target ≥ %.1f): %s\n", order, ratio, targetFreshRatio, verdict(ratio >= targetFreshRatio))
	}
	fmt.Printf("  oldest transaction open on the server right after the creates: %s\n", r.horizon)
	fmt.Printf("  count of the project's issues, fresh: %s\n  settled: %s\n", r.explainFresh, r.explainSettled)
}
