package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/queue"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// targetScaleRatio is the scale phase's target: every p99 at the big instance within
// this factor of the same p99 at the small one.
const targetScaleRatio = 1.5

// bigTableRows is the size from which a sequential scan in a measured statement's plan
// is reported: a table this large is one whose scan grows with the data.
const bigTableRows = 100000

// scaleOptions size the scale phase.
type scaleOptions struct {
	issues   int // the big instance
	small    int // the instance it is compared with
	clients  int
	duration time.Duration
	sla      bool
	// keep keeps the big instance's database (-keep), for EXPLAIN and friends.
	keep bool
	// only, when set (-scale-only), keeps the figures whose name contains one of its
	// comma-separated parts: a targeted before/after run measures only what it changed.
	only string
}

// onlyFigures is ops without the figures only leaves out (scaleOptions.only).
func onlyFigures(ops []namedOp, only string) []namedOp {
	if only == "" {
		return ops
	}
	return slices.DeleteFunc(ops, func(f namedOp) bool {
		for part := range strings.SplitSeq(only, ",") {
			if part = strings.TrimSpace(part); part != "" && strings.Contains(f.name, part) {
				return false
			}
		}
		return true
	})
}

// scaleFigure is one measurement at both instances.
type scaleFigure struct {
	name       string
	small, big result
}

// namedOp is one figure's load on one instance; clients overrides the phase's count.
type namedOp struct {
	name    string
	clients int
	do      op
}

// scaleRun is a seeded instance with its server and its figures' loads.
type scaleRun struct {
	n     int
	db    *store.DB
	s     *scaleSeeded
	rec   *statementLog
	bus   *event.Bus
	c     *client
	ops   []namedOp
	close func()
	// dbURL is the instance's database; procs its API and worker processes, and
	// procOps the figures' loads sent to them (ops[i] and procOps[i] are one figure).
	dbURL   string
	procs   *scaleProcs
	procOps []namedOp
}

// runScale seeds two instances, small and big, in databases of their own with a server
// each, starts a `taskweave api` and a `taskweave worker` process on each, then measures
// every figure through those processes on the small one and at once on the big one (the
// machine's other load drifts; neighbours see the same), and prints them side by side
// with every sequential scan over a big table in the plans of the statements the big
// instance's in-process server sent, and the processes' memory and Postgres sessions.
func runScale(ctx context.Context, o scaleOptions) error {
	fmt.Printf("scale: %d-issue instance beside a %d-issue one, %d clients, %s per figure\n", o.issues, o.small,
		o.clients, o.duration)
	// Each instance gets its own `taskweave api` and `taskweave worker`, built once and
	// before the seeding: built after it, a binary of a tree changed meanwhile (a
	// migration edited) refused the seeded databases after half an hour of seeding.
	bin, err := buildTaskweave(ctx)
	if err != nil {
		return err
	}
	small, err := scaleInstance(ctx, o, o.small)
	if err != nil {
		return fmt.Errorf("scale %d: %w", o.small, err)
	}
	defer small.close()
	big, err := scaleInstance(ctx, o, o.issues)
	if err != nil {
		return fmt.Errorf("scale %d: %w", o.issues, err)
	}
	defer big.close()
	// Seeding the big instance takes longer than an access token lives: both sign in
	// again now (the owner is a system ADMIN, so one token serves every figure).
	for _, r := range []*scaleRun{small, big} {
		token, err := r.c.accessToken(ctx, "/api/v1/auth/login",
			map[string]string{"email": r.s.email, "password": "bench password 123"}, http.StatusOK)
		if err != nil {
			return fmt.Errorf("scale %d: sign in: %w", r.n, err)
		}
		r.s.token, r.s.adminToken = token, token
	}
	for _, r := range []*scaleRun{small, big} {
		if r.procs, err = startScaleProcs(ctx, bin, r.dbURL, o.clients); err != nil {
			return fmt.Errorf("scale %d: %w", r.n, err)
		}
		defer r.procs.stop()
		r.procOps = onlyFigures(scaleFigures(r.s, r.procs.apiClient, r.procs.metrics), o.only)
		r.procs.sample()
	}
	// A figure's statements are recorded from the in-process server, the only one whose
	// pool this process traces: half a second of the load goes to it (the big instance's
	// recorded for EXPLAIN), half a second warms the API process, and the measurement
	// goes to the API process.
	measure := func(r *scaleRun, i int) result {
		f, pf := r.ops[i], r.procOps[i]
		clients := cmp.Or(f.clients, o.clients)
		r.rec.recording.Store(r == big)
		load(ctx, clients, time.Second/2, f.do)
		r.rec.recording.Store(false)
		load(ctx, clients, time.Second/2, pf.do)
		return load(ctx, clients, o.duration, pf.do)
	}
	var figures []scaleFigure
	for i, f := range small.ops {
		fig := scaleFigure{name: f.name, small: measure(small, i), big: measure(big, i)}
		fmt.Printf("scale: %-44s p99 %10s at %d, %10s at %d\n", f.name, fig.small.pct(99), o.small, fig.big.pct(99), o.issues)
		figures = append(figures, fig)
	}
	if o.sla {
		for _, r := range []*scaleRun{small, big} {
			// The timers start over a window that grows with them (48 hours at the small
			// instance's count), so a scan at either size finds the same crossings a minute
			// among all of its running timers: the figure is the cost of the timers the
			// scan must not read, at equal work (docs/performance.md#the-sla-scan-at-scale).
			// Each scan's reports and the cost per report are printed beside it.
			window := time.Duration(float64(slaWindow) * float64(r.n) / float64(o.small))
			so := slaOptions{issues: r.n, projects: 10, scans: 10, window: window}
			res, err := runSLA(ctx, r.db, r.bus, r.s.seeded, so)
			if err != nil {
				return fmt.Errorf("sla: %w", err)
			}
			times := make([]string, len(res.scans))
			for i, d := range res.scans {
				times[i] = fmt.Sprintf("%s/%d", d.Round(100*time.Microsecond), res.reported[i])
			}
			fmt.Printf("scale %d: SLA scans over %d timers started in the last %s, %d reported before (time/reports): %s\n",
				r.n, r.n, window.Round(time.Hour), res.history, strings.Join(times, " "))
			fmt.Printf("scale %d: SLA scan per report: %s\n", r.n, perReport(res.scans, res.reported, res.timings))
			if r == small {
				figures = append(figures, scaleFigure{name: fmt.Sprintf("SLA scan, timers = issues (max of %d)", so.scans)})
			}
			f := &figures[len(figures)-1]
			if r == small {
				f.small = result{latencies: slices.Sorted(slices.Values(res.scans))}
			} else {
				f.big = result{latencies: slices.Sorted(slices.Values(res.scans))}
				fmt.Printf("scale: SLA scan plan at %d:\n    %s\n", r.n, strings.ReplaceAll(res.explain, "\n", "\n    "))
			}
		}
	}
	fmt.Printf("scale: the bench process (both in-process servers, the load generator, the seeding's buffers): %s\n", processMemory())
	fmt.Printf("scale: Postgres connections open: %s\n", connections(ctx, big.db))
	for _, r := range []*scaleRun{small, big} {
		if err := printScaleProcs(ctx, r); err != nil {
			return err
		}
	}
	scans, err := big.rec.seqScans(ctx, big.db)
	if err != nil {
		return err
	}

	fmt.Println()
	fmt.Printf("%-44s %11s %11s %7s  %-16s %10s %10s %7s\n", "figure", "p99 "+strconv.Itoa(o.small), "p99 "+strconv.Itoa(o.issues),
		"ratio", fmt.Sprintf("verdict (≤ %.1f×)", targetScaleRatio), "p50 small", "p50 big", "ratio")
	missed := 0
	for _, f := range figures {
		ratio := float64(f.big.pct(99)) / float64(max(f.small.pct(99), time.Microsecond))
		ok := ratio <= targetScaleRatio && f.small.errors+f.big.errors == 0
		if !ok {
			missed++
		}
		errs := ""
		if n := f.small.errors + f.big.errors; n > 0 {
			errs = fmt.Sprintf("  (%d errors: %.120s%.120s)", n, f.small.firstErr, f.big.firstErr)
		}
		fmt.Printf("%-44s %11s %11s %6.2f×  %-16s %10s %10s %6.2f×%s\n", f.name, f.small.pct(99), f.big.pct(99), ratio, verdict(ok),
			f.small.pct(50), f.big.pct(50), float64(f.big.pct(50))/float64(max(f.small.pct(50), time.Microsecond)), errs)
	}
	fmt.Printf("scale: %d of %d figures within %.1f×\n", len(figures)-missed, len(figures), targetScaleRatio)
	fmt.Println()
	if len(scans) == 0 {
		fmt.Printf("scale: no sequential scan over a table of ≥ %d rows in the plans of the measured statements\n", bigTableRows)
	}
	for _, s := range scans {
		fmt.Println(s)
	}
	return nil
}

// scaleInstance clones a database, seeds it at n issues, wires a server on it and
// lists its figures' loads.
func scaleInstance(ctx context.Context, o scaleOptions, n int) (_ *scaleRun, err error) {
	r := &scaleRun{n: n, rec: &statementLog{}}
	var closers []func()
	r.close = func() {
		for _, f := range slices.Backward(closers) {
			f()
		}
	}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	dbURL, err := storetest.CloneURL(ctx)
	if err != nil {
		return nil, err
	}
	if o.keep && n == o.issues {
		closers = append(closers, func() { fmt.Printf("scale %d: database kept: %s\n", n, dbURL) })
	} else {
		closers = append(closers, func() { storetest.Drop(dbURL) })
	}
	r.dbURL = dbURL
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.Tracer = r.rec
	db, err := store.OpenConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r.db = db
	closers = append(closers, db.Close)
	srv, err := wire(db)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.bus = srv.Bus()
	go func() { _ = srv.App.Listener(ln) }()
	closers = append(closers, func() { _ = srv.App.ShutdownWithTimeout(5 * time.Second) })
	c := newClient("http://"+ln.Addr().String(), o.clients)
	r.c = c

	start := time.Now()
	logf := func(format string, args ...any) {
		fmt.Printf("scale %d: %s\n", n, fmt.Sprintf(format, args...))
	}
	z := sizeFor(n)
	s, err := seedScale(ctx, db, c, z, logf)
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	r.s = s
	if err := boardSprint(ctx, db, s.seeded); err != nil {
		return nil, err
	}
	logf("seeded in %s; %s", time.Since(start).Round(time.Second), databaseSize(ctx, db))

	// The queue gauges of the worker's /metrics, collected in this process on the traced
	// pool, so their statement is explained with the others.
	reg := prometheus.NewRegistry()
	reg.MustRegister(queue.NewCollector(db.Pool, slog.New(slog.NewTextHandler(io.Discard, nil))))
	r.ops = onlyFigures(scaleFigures(s, c, func(context.Context, int, int) error { _, err := reg.Gather(); return err }), o.only)
	return r, nil
}

// scaleFigures lists the figures' loads on a seeded instance, sent through c (the
// in-process server, or the instance's `taskweave api` process); metrics is the worker
// /metrics figure's load (the gauges collected in this process, or a scrape of the
// instance's `taskweave worker`).
func scaleFigures(s *scaleSeeded, c *client, metrics op) []namedOp {
	z := s.size
	var ops []namedOp
	add := func(name string, do op) { ops = append(ops, namedOp{name: name, do: do}) }
	// The token is read at each request: runScale signs in again before it measures.
	get := func(path string) op {
		return func(ctx context.Context, _, _ int) error {
			_, err := c.do(ctx, http.MethodGet, path, s.token, nil, http.StatusOK, false)
			return err
		}
	}
	base := "/api/v1/projects/" + s.key
	list := base + "/issues?size=50"
	pages := (z.big + 49) / 50
	cfPages := (z.big/6 + 49) / 50
	for _, v := range []struct {
		name, query string
		pages       int
	}{{"number", "", pages}, {"createdAt", "&sort=createdAt", pages}, {"updatedAt", "&sort=updatedAt", pages},
		{"3 cf filters", "&" + s.cfQuery, cfPages}} {
		for _, p := range []struct {
			name string
			pick func() int
		}{{"page 0", func() int { return 0 }}, {"random page", func() int { return rand.IntN(v.pages) }},
			{"last page", func() int { return v.pages - 1 }}} {
			add(fmt.Sprintf("list %s, %s", v.name, p.name), func(ctx context.Context, _, _ int) error {
				_, err := c.do(ctx, http.MethodGet, list+v.query+"&page="+strconv.Itoa(p.pick()), s.token, nil, http.StatusOK, false)
				return err
			})
		}
	}
	add("board, 500-issue sprint", get(base+"/board"))
	randomIssue := func() string { return s.key + "-" + strconv.Itoa(1+rand.IntN(z.big)) }
	add("issue read", func(ctx context.Context, _, _ int) error {
		_, err := c.do(ctx, http.MethodGet, base+"/issues/"+randomIssue(), s.token, nil, http.StatusOK, false)
		return err
	})
	add("comments of an issue", func(ctx context.Context, _, _ int) error {
		_, err := c.do(ctx, http.MethodGet, base+"/issues/"+randomIssue()+"/comments", s.token, nil, http.StatusOK, false)
		return err
	})
	add("create issue", func(ctx context.Context, w, seq int) error { return c.post(base+"/issues", s.token)(ctx, w, seq) })
	add("comment", func(ctx context.Context, w, seq int) error {
		body := fmt.Appendf(nil, `{"body":"Bench comment %d-%d"}`, w, seq)
		_, err := c.do(ctx, http.MethodPost, base+"/issues/"+randomIssue()+"/comments", s.token, body, http.StatusCreated, false)
		return err
	})
	add("project audit, page 0", get(base+"/audit"))
	// An hour of audit rows has the same count at every size (the same rows per day).
	hour := url.Values{"from": {time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)},
		"to": {time.Now().UTC().Format(time.RFC3339)}}.Encode()
	add("project audit, last hour", get(base+"/audit?"+hour))
	add("audit export, last hour (admin)", get("/api/v1/admin/audit/export?"+hour))
	closed := s.closedID.String()
	add("report burndown", get(base+"/reports/burndown?sprintId="+closed))
	add("report velocity", get(base+"/reports/velocity"))
	add("report cycle time (sprints)", get(base+"/reports/cycle-time"))
	add("report cycle time (one sprint)", get(base+"/reports/cycle-time?sprintId="+closed))
	add("admin jobs list", get("/api/v1/admin/jobs"))
	add("admin jobs list, completed", get("/api/v1/admin/jobs?state=completed"))
	// The worker's /metrics: the queue gauges are its only statement; one scraper.
	return append(ops, namedOp{name: "worker /metrics (queue gauges), 1 scraper", clients: 1, do: metrics})
}

// databaseSize is the database's size and its largest tables.
func databaseSize(ctx context.Context, db *store.DB) string {
	var out string
	err := db.Pool.QueryRow(ctx, `SELECT pg_size_pretty(pg_database_size(current_database())) || ' (' ||
		string_agg(relname || ' ' || pg_size_pretty(pg_total_relation_size(oid)), ', ' ORDER BY pg_total_relation_size(oid) DESC) || ')'
		FROM (SELECT oid, relname FROM pg_class WHERE relkind IN ('r', 'p') AND relnamespace = 'public'::regnamespace
			ORDER BY pg_total_relation_size(oid) DESC LIMIT 6) AS t`).Scan(&out)
	if err != nil {
		return err.Error()
	}
	return out
}

// statementLog is the scale phase's tracer: while recording, it keeps every distinct
// statement the server sends with the arguments of its first use, for EXPLAIN.
type statementLog struct {
	recording atomic.Bool
	mu        sync.Mutex
	seen      map[string][]any
	order     []string // shapes, first seen first
	text      []string // the first text of each shape
}

// literals are the constants of a statement's text: quoted strings and numbers.
var literals = regexp.MustCompile(`'(?:[^']|'')*'|\b\d+(?:\.\d+)?\b`)

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if !l.recording.Load() {
		return ctx
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[string][]any{}
	}
	// Statements that differ in their inlined constants alone (bun formats its
	// arguments into the text) are one statement here.
	shape := literals.ReplaceAllString(d.SQL, "?")
	if _, ok := l.seen[shape]; !ok {
		l.seen[shape] = slices.Clone(d.Args)
		l.text = append(l.text, d.SQL)
		l.order = append(l.order, shape)
	}
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

var seqScanLine = regexp.MustCompile(`Seq Scan on (\w+)`)

// explainable is a statement EXPLAIN accepts.
var explainable = regexp.MustCompile(`(?is)^\s*(\(\s*)?(WITH|SELECT|INSERT|UPDATE|DELETE)\b`)

// seqScans EXPLAINs every recorded statement with its recorded arguments and reports
// each plan that scans a table of at least bigTableRows rows sequentially.
func (l *statementLog) seqScans(ctx context.Context, db *store.DB) ([]string, error) {
	big := map[string]int64{}
	rows, err := db.Pool.Query(ctx, `SELECT relname, reltuples::bigint FROM pg_class
		WHERE relkind IN ('r', 'p') AND relnamespace = 'public'::regnamespace AND reltuples >= $1`, bigTableRows)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, err
		}
		big[name] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []string
	explained, failed := 0, 0
	for i, shape := range l.order {
		sql := l.text[i]
		if !explainable.MatchString(sql) {
			continue
		}
		var plan []string
		rows, err := db.Pool.Query(ctx, "EXPLAIN "+sql, l.seen[shape]...)
		if err == nil {
			for rows.Next() {
				var line string
				if err = rows.Scan(&line); err != nil {
					break
				}
				plan = append(plan, line)
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		if err != nil {
			failed++
			continue
		}
		explained++
		for _, line := range plan {
			m := seqScanLine.FindStringSubmatch(line)
			if m == nil || big[m[1]] == 0 {
				continue
			}
			out = append(out, fmt.Sprintf("SEQUENTIAL SCAN over %s (%d rows) in:\n  %s\n  %s", m[1], big[m[1]],
				strings.Join(strings.Fields(sql), " "), strings.Join(plan, "\n  ")))
			break
		}
	}
	fmt.Printf("scale: %d distinct statements explained, %d not explainable with their recorded arguments\n", explained, failed)
	return out, nil
}

// processMemory is this process's resident set now and at its peak (VmRSS, VmHWM).
func processMemory() string {
	return fmt.Sprintf("VmHWM %d kB, VmRSS %d kB", procStatusKiB("self", "VmHWM"), procStatusKiB("self", "VmRSS"))
}

// procStatusKiB reads a kB field of /proc/<pid>/status (VmRSS, VmHWM) for pid, a number
// or "self"; 0 if unknown.
func procStatusKiB(pid, field string) int {
	raw, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// connections counts the server's connections by database and state.
func connections(ctx context.Context, db *store.DB) string {
	var out string
	err := db.Pool.QueryRow(ctx, `SELECT count(*) || ' in all, ' || count(*) FILTER (WHERE datname = current_database()) ||
		' to this instance''s database (its pool: max ' || $1::int || ')' FROM pg_stat_activity WHERE backend_type = 'client backend'`,
		db.Pool.Config().MaxConns).Scan(&out)
	if err != nil {
		return err.Error()
	}
	return out
}
