package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/taskweave/taskweave/store"
)

// Targets of the issue list at any page (on the reference machine, 2 cores, 32
// clients): random pages of the 10,000 at least this many requests per second, and the
// last page's p50 within this factor of page 0's, for each variant.
const (
	targetPagesRPS     = 1500
	targetLastPageP50x = 1.5
)

// pageVariant is one way of listing the project: plain, by last update, with three cf
// filters.
type pageVariant struct {
	name  string
	query string
}

// pagesResult is one variant's three measurements and its page count.
type pagesResult struct {
	variant             pageVariant
	pages               int
	first, random, last result
	// lastByCursor is the last page again, reached by the cursor the page before it
	// hands out (keyset: no offset at all).
	lastByCursor result
}

// runPages measures GET /issues?size=50 of the seeded project, per variant, at page 0,
// at uniformly random pages and at the last page. Each load is preceded by a second of
// the same requests (caches, prepared statements, the pool). The warm-ups before the
// phases created a few thousand issues; the phase first VACUUMs, as autovacuum soon
// would after so many inserts, so the keys are read from a settled visibility map.
func runPages(ctx context.Context, db *store.DB, c *client, s *seeded, clients int, d time.Duration, stats *statementStats) ([]pagesResult, error) {
	if _, err := db.Pool.Exec(ctx, "VACUUM ANALYZE issues, custom_field_values"); err != nil {
		return nil, err
	}
	base := "/api/v1/projects/" + s.key + "/issues?size=50"
	variants := []pageVariant{{"plain", ""}, {"sort=updatedAt", "&sort=updatedAt"}}
	if s.cfQuery != "" { // seeded with -custom-fields
		variants = append(variants, pageVariant{"3 cf filters", "&" + s.cfQuery})
	}
	var out []pagesResult
	for _, v := range variants {
		total, err := c.totalPages(ctx, base+v.query, s.token)
		if err != nil {
			return nil, err
		}
		if total < 2 {
			return nil, fmt.Errorf("pages: %s has %d pages", v.name, total)
		}
		r := pagesResult{variant: v, pages: total}
		at := func(pick func() int) op {
			return func(ctx context.Context, _, _ int) error {
				_, err := c.do(ctx, http.MethodGet, base+v.query+"&page="+strconv.Itoa(pick()), s.token, nil, http.StatusOK, false)
				return err
			}
		}
		measure := func(o op) result {
			load(ctx, clients, time.Second, o)
			before := stats.snapshot()
			res := load(ctx, clients, d, o)
			res.statements = stats.snapshot().minus(before)
			return res
		}
		r.first = measure(at(func() int { return 0 }))
		r.random = measure(at(func() int { return rand.IntN(r.pages) }))
		r.last = measure(at(func() int { return r.pages - 1 }))
		cursor, err := c.nextCursor(ctx, base+v.query+"&page="+strconv.Itoa(r.pages-2), s.token)
		if err != nil {
			return nil, err
		}
		r.lastByCursor = measure(func(ctx context.Context, _, _ int) error {
			_, err := c.do(ctx, http.MethodGet, base+v.query+"&cursor="+url.QueryEscape(cursor), s.token, nil, http.StatusOK, false)
			return err
		})
		out = append(out, r)
	}
	return out, nil
}

// printPages reports the pages phase and its verdicts.
func printPages(rs []pagesResult) {
	fmt.Println()
	fmt.Printf("%-44s %10s %8s %10s %10s %14s\n", "GET /issues?size=50 at any page", "req/s", "errors", "p50", "p99", "queries/req")
	for _, r := range rs {
		for _, row := range []struct {
			name string
			res  result
		}{{"page 0", r.first}, {"random pages", r.random}, {fmt.Sprintf("last page (%d)", r.pages-1), r.last},
			{"last page by cursor", r.lastByCursor}} {
			fmt.Printf("%-44s %10.0f %8d %10s %10s %14s\n", r.variant.name+", "+row.name, row.res.rps(), row.res.errors,
				row.res.pct(50), row.res.pct(99), row.res.perRequest())
		}
	}
	for _, r := range rs {
		ratio := float64(r.last.pct(50)) / float64(r.first.pct(50))
		fmt.Printf("%s: random pages %.0f req/s (target ≥ %d): %s; last page p50 %.2f× page 0's (target ≤ %.1f×): %s\n",
			r.variant.name, r.random.rps(), targetPagesRPS, verdict(r.random.rps() >= targetPagesRPS), ratio, targetLastPageP50x,
			verdict(ratio <= targetLastPageP50x))
		fmt.Printf("%s: last page by cursor p50 %s, by number %s (page 0 %s)\n", r.variant.name, r.lastByCursor.pct(50),
			r.last.pct(50), r.first.pct(50))
		if n := r.first.errors + r.random.errors + r.last.errors + r.lastByCursor.errors; n > 0 {
			fmt.Printf("  %d errors, first: %q %q %q\n", n, r.first.firstErr, r.random.firstErr, r.last.firstErr)
		}
	}
}
