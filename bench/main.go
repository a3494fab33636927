// Command bench loads the issue endpoints of a real server over real HTTP and compares
// issue creation with its ceiling: the same rows written by bare pgx transactions.
//
//	go run ./bench [-d 10s] [-c 32] [-issues 10000] [-conns 0] [-audit] [-phases list,create,raw]
//	               [-cpuprofile cpu.out] [-memprofile mem.out] [-keep]
//
// It clones a fresh migrated database (storetest.CloneURL, TW_TEST_DATABASE_URL or the
// local default), wires the API exactly as `taskweave api` does, serves it on
// 127.0.0.1:0, seeds one project with -issues issues, then runs, -d each with -c clients:
// GET /issues?size=50, POST /issues, and the raw create transactions. It prints
// requests/s, errors, p50/p99 and the statements the server sent per request, then the
// verdict on each target. The load generator shares the machine (and the process) with
// the server and Postgres, so its own work is part of what is measured.
//
// The pages phase lists the project at page 0, at random pages and at the last page (by
// page number, and by the cursor the page before it hands out),
// plain, by last update and with three cf filters. The pgbench phase runs the writes of
// POST /issues as pgbench transactions in the same project: the ceiling the create phase
// is compared with, measured in the same run. The create64 phase creates issues spread
// over 64 projects, through the API and then as pgbench transactions.
//
// The sla phase (-sla-issues, -sla-scans) times the SLA breach monitor's periodic scan
// over 100,000 running timers and prints its plan.
//
// The search phase (-search-issues, -search-comments, -search-c) seeds a project of
// 100,000 issues with comments and prints the p99 of two-word full-text searches beside
// ILIKE on the same rows, and the search triggers' cost on writes.
//
// The automation phase (-auto-rules, -auto-events, -auto-rate) saves 200 rules in the
// project, starts two `taskweave worker` processes and emits 1,000 issue events on the
// server's bus: events/s until every evaluation (and every chain the rules' own changes
// start) is done, and the p99 from an event to its executions' rows.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/migrations"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// Targets on the reference machine (2 cores).
const (
	targetCreateRatio = 0.5
	targetCreateP99   = 25 * time.Millisecond
	targetListRPS     = 3000
	targetBoardRPS    = 1500
)

type options struct {
	duration time.Duration
	clients  int
	issues   int
	conns    int
	audit    bool
	// customFields seeds three custom fields with a value on every issue (the default);
	// off, the list phases read the same rows as before custom fields existed.
	customFields bool
	cpuprofile   string
	memprofile   string
	keep         bool
	phases       string
	// exportMiB is the weight of the attachments the tasks phase exports.
	exportMiB  int
	deliver    deliverOptions
	automation automationOptions
	sla        slaOptions
	search     searchOptions
	scale      scaleOptions
	// freshCreates is how many issues the fresh phase creates before it lists.
	freshCreates int
	// freshVacuum is the fresh phase's worker's TW_VACUUM_INTERVAL.
	freshVacuum time.Duration
	// fanoutClients is how many STOMP clients the fanout phase subscribes.
	fanoutClients int
	// fanoutInProcess runs the fan-out phase against the bench's own server instead of
	// a separate `taskweave api` process.
	fanoutInProcess bool
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "d", 10*time.Second, "duration of each load phase")
	flag.IntVar(&o.clients, "c", 32, "concurrent clients")
	flag.IntVar(&o.issues, "issues", 10000, "issues seeded in the project")
	flag.IntVar(&o.conns, "conns", 0, "database pool size (0 = the pgx default, as TW_DATABASE_MAX_CONNS=0)")
	flag.BoolVar(&o.customFields, "custom-fields", true, "seed three custom fields with a value on every issue (the cf list phases need them)")
	flag.BoolVar(&o.audit, "audit", false, "switch the WRITE audit level on (creates then enqueue an audit job)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the load phases to this file")
	flag.StringVar(&o.memprofile, "memprofile", "", "write an allocation profile (whole run) to this file")
	flag.StringVar(&o.phases, "phases", "list,pages,fresh,create,pgbench,create64,raw,board,fanout,deliver,crash,sla,automation,tasks,search", "phases to run, comma-separated (scale, list, pages, fresh, create, pgbench, create64, raw, board, fanout, deliver, crash, sla, automation, tasks, search)")
	flag.IntVar(&o.search.issues, "search-issues", 100000, "issues of the search phase's project")
	flag.IntVar(&o.search.comments, "search-comments", 2, "comments per issue of the search phase, on average")
	flag.IntVar(&o.search.clients, "search-c", 4, "concurrent clients of the search phase")
	flag.IntVar(&o.sla.issues, "sla-issues", 100000, "issues with running SLA timers in the sla phase")
	flag.IntVar(&o.sla.projects, "sla-projects", 10, "projects (desks) the sla phase's issues are spread over")
	flag.IntVar(&o.sla.scans, "sla-scans", 10, "breach monitor scans the sla phase measures, a minute apart on its clock")
	flag.BoolVar(&o.sla.calendars, "sla-calendars", true, "run the sla phase's scans again under business-hours calendars")
	flag.IntVar(&o.fanoutClients, "fanout-clients", 500, "STOMP clients the fanout phase subscribes to the board")
	flag.IntVar(&o.fanoutClients, "clients", 500, "the same as -fanout-clients (`-phases fanout -clients 2000`)")
	flag.BoolVar(&o.fanoutInProcess, "fanout-inprocess", false, "fan out from the bench's in-process server instead of a separate `taskweave api` process (whose RSS the phase reports)")
	flag.IntVar(&o.freshCreates, "fresh-creates", 10000, "issues the fresh phase creates through the API before it lists random pages")
	flag.DurationVar(&o.freshVacuum, "fresh-vacuum-interval", 2*time.Second, "TW_VACUUM_INTERVAL of the fresh phase's worker process (0: its vacuumer off, autovacuum alone)")
	flag.IntVar(&o.scale.issues, "scale-issues", 1000000, "issues of the scale phase's big instance (every other table sized from it)")
	flag.IntVar(&o.scale.small, "scale-small", 10000, "issues of the instance the scale phase compares the big one with")
	flag.IntVar(&o.scale.clients, "scale-c", 4, "concurrent clients of each scale phase figure")
	flag.DurationVar(&o.scale.duration, "scale-d", 3*time.Second, "duration of each scale phase figure")
	flag.StringVar(&o.scale.only, "scale-only", "", "measure only the scale phase's figures whose name contains one of these comma-separated parts (\"cf filters,audit\")")
	flag.BoolVar(&o.scale.sla, "scale-sla", true, "time the SLA scan in the scale phase over as many running timers as the instance has issues")
	flag.IntVar(&o.automation.rules, "auto-rules", 200, "enabled automation rules in the automation phase")
	flag.IntVar(&o.automation.events, "auto-events", 1000, "issue events the automation phase measures")
	flag.IntVar(&o.automation.warmup, "auto-warmup", 200, "issue events worked before the automation phase's measurement (not counted)")
	flag.IntVar(&o.automation.rate, "auto-rate", 600, "offered issue events per second in the automation phase (0 = as fast as possible)")
	flag.IntVar(&o.automation.workers, "auto-workers", 2, "worker processes in the automation phase")
	flag.IntVar(&o.automation.batch, "auto-batch", 5, "issue events per transaction in the automation phase")
	flag.StringVar(&workerCPUProfile, "worker-cpuprofile", "", "write a CPU profile of each worker process of the deliver and automation phases to this path plus .1, .2, … (TW_CPU_PROFILE)")
	flag.IntVar(&o.exportMiB, "export-mib", 1024, "MiB of attachments the tasks phase exports (0: no export)")
	flag.IntVar(&o.deliver.events, "events", 10000, "issue events emitted by the deliver and crash phases")
	flag.IntVar(&o.deliver.warmup, "warmup-events", 1000, "issue events delivered before each deliver phase's measurement (not counted)")
	flag.IntVar(&o.deliver.rate, "rate", 3500, "offered issue events per second in the deliver phases (0 = as fast as possible)")
	flag.IntVar(&o.deliver.batch, "batch", 5, "issue events per transaction in the deliver phases")
	flag.IntVar(&o.deliver.workers, "workers", 2, "worker processes in the deliver phases")
	flag.IntVar(&o.deliver.workerConns, "worker-conns", 0, "TW_DATABASE_MAX_CONNS of each worker process (0 = its default)")
	flag.BoolVar(&o.keep, "keep", false, "keep the database afterwards (its URL is printed) for EXPLAIN and friends")
	flag.Parse()
	o.scale.keep = o.keep
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if hasPhase(o.phases, "scale") {
		if err := runScale(ctx, o.scale); err != nil {
			return fmt.Errorf("scale phase: %w", err)
		}
		if o.phases == "scale" {
			return nil
		}
	}
	url, err := storetest.CloneURL(ctx)
	if err != nil {
		return fmt.Errorf("clone database: %w", err)
	}
	if o.keep {
		defer fmt.Println("bench: database kept:", url)
	} else {
		defer storetest.Drop(url)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return err
	}
	if o.conns > 0 {
		cfg.MaxConns = int32(o.conns)
	}
	stats := &statementStats{}
	cfg.ConnConfig.Tracer = stats
	db, err := store.OpenConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()

	srv, err := wire(db)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.App.Listener(ln) }()
	defer func() { _ = srv.App.ShutdownWithTimeout(5 * time.Second) }()
	c := newClient("http://"+ln.Addr().String(), o.clients)

	fmt.Printf("bench: %d clients, %s per phase, %d CPUs, pool %d connections, audit WRITE %v\n",
		o.clients, o.duration, runtime.NumCPU(), db.Pool.Config().MaxConns, o.audit)
	seedStart := time.Now()
	s, err := seed(ctx, db, c, o.issues, o.audit, o.customFields)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	fmt.Printf("bench: project %s with %d issues seeded in %s\n", s.key, o.issues, time.Since(seedStart).Round(time.Millisecond))

	listPath := "/api/v1/projects/" + s.key + "/issues?size=50"
	createPath := "/api/v1/projects/" + s.key + "/issues"
	// A short warm-up fills the connection pools and statement caches.
	load(ctx, o.clients, time.Second, c.get(listPath, s.token))
	load(ctx, o.clients, time.Second, c.post(createPath, s.token))
	rawCreate, err := newRawCreate(ctx, db, s)
	if err != nil {
		return err
	}
	load(ctx, o.clients, time.Second, rawCreate)

	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	if o.memprofile != "" {
		defer func() {
			if f, err := os.Create(o.memprofile); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	var list, create, raw result
	if strings.Contains(o.phases, "list") {
		before := stats.snapshot()
		list = load(ctx, o.clients, o.duration, c.get(listPath, s.token))
		list.statements = stats.snapshot().minus(before)
	}
	var pages []pagesResult
	if hasPhase(o.phases, "pages") {
		if pages, err = runPages(ctx, db, c, s, o.clients, o.duration, stats); err != nil {
			return fmt.Errorf("pages phase: %w", err)
		}
	}
	var fresh *freshResult
	if hasPhase(o.phases, "fresh") {
		r, err := runFresh(ctx, db, url, c, s, o.clients, o.freshCreates, o.duration, o.freshVacuum)
		if err != nil {
			return fmt.Errorf("fresh phase: %w", err)
		}
		fresh = &r
	}
	if hasPhase(o.phases, "create") {
		if err := settle(ctx, db); err != nil {
			return err
		}
		before := stats.snapshot()
		create = load(ctx, o.clients, o.duration, c.post(createPath, s.token))
		create.statements = stats.snapshot().minus(before)
	}
	var pgOne, pgSpread pgbenchResult
	if hasPhase(o.phases, "pgbench") {
		script := pgbenchScript(benchProject{id: s.projectID, key: s.key, statusID: s.statusID}, s.userID)
		if err := settle(ctx, db); err != nil {
			return err
		}
		if pgOne, err = runPgbench(ctx, url, []string{script}, o.clients, o.duration); err != nil {
			return err
		}
	}
	var spread result
	if hasPhase(o.phases, "create64") {
		if spread, pgSpread, err = runCreate64(ctx, db, c, s, url, o.clients, o.duration, stats); err != nil {
			return fmt.Errorf("create64 phase: %w", err)
		}
	}
	if strings.Contains(o.phases, "raw") {
		if err := settle(ctx, db); err != nil {
			return err
		}
		raw = load(ctx, o.clients, o.duration, rawCreate)
	}

	var board, boardPoll result
	if strings.Contains(o.phases, "board") {
		if board, err = runBoard(ctx, db, stats, c, s, o.clients, o.duration); err != nil {
			return err
		}
		if boardPoll, err = runBoardPoll(ctx, stats, c, s, o.clients, o.duration); err != nil {
			return err
		}
	}

	fmt.Println()
	fmt.Printf("%-34s %10s %8s %10s %10s %14s\n", "phase", "req/s", "errors", "p50", "p99", "queries/req")
	for _, r := range []struct {
		name string
		res  result
	}{{"GET /issues?size=50 (HTTP)", list}, {"POST /issues (HTTP)", create}, {"raw create transaction (pgx)", raw},
		{"GET /board, 500 issues (HTTP)", board}, {"GET /board, If-None-Match → 304", boardPoll}} {
		fmt.Printf("%-34s %10.0f %8d %10s %10s %14s\n", r.name, r.res.rps(), r.res.errors, r.res.pct(50), r.res.pct(99), r.res.perRequest())
	}
	if strings.Contains(o.phases, "board") {
		fmt.Printf("board %.0f req/s (target ≥ %d): %s\n", board.rps(), targetBoardRPS, verdict(board.rps() >= targetBoardRPS))
	}
	if hasPhase(o.phases, "pages") {
		printPages(pages)
	}
	if fresh != nil {
		printFresh(*fresh)
	}
	printCreates(o.phases, s.audit, create, pgOne, spread, pgSpread)
	if strings.Contains(o.phases, "fanout") {
		r, err := fanoutPhase(ctx, url, "http://"+ln.Addr().String(), db, c, s, o)
		if err != nil {
			return fmt.Errorf("fanout phase: %w", err)
		}
		fmt.Println()
		printFanout(r)
	}
	if strings.Contains(o.phases, "deliver") {
		d := o.deliver
		d.wait = time.Minute
		res, err := runDeliver(ctx, db, url, srv.Bus(), c, s, d)
		printDeliver("deliver", d, res)
		if err != nil {
			return fmt.Errorf("deliver phase: %w", err)
		}
	}
	if strings.Contains(o.phases, "crash") {
		d := o.deliver
		d.crash, d.wait = true, 3*time.Minute
		res, err := runDeliver(ctx, db, url, srv.Bus(), c, s, d)
		printDeliver("crash", d, res)
		if err != nil {
			return fmt.Errorf("crash phase: %w", err)
		}
	}
	if strings.Contains(o.phases, "sla") {
		res, err := runSLA(ctx, db, srv.Bus(), s, o.sla)
		if err != nil {
			return fmt.Errorf("sla phase: %w", err)
		}
		printSLA(o.sla, res)
	}
	if hasPhase(o.phases, "search") {
		res, err := runSearch(ctx, db, srv.Bus(), c, s, o.search, o.duration)
		if err != nil {
			return fmt.Errorf("search phase: %w", err)
		}
		printSearch(o.search, res)
	}
	if strings.Contains(o.phases, "automation") {
		res, err := runAutomation(ctx, db, url, srv.Bus(), c, s, o.automation)
		if err != nil {
			return fmt.Errorf("automation phase: %w", err)
		}
		printAutomation(o.automation, res)
	}
	if hasPhase(o.phases, "tasks") {
		res, err := runTasks(ctx, db, c, s, o.issues, o.exportMiB)
		if err != nil {
			return fmt.Errorf("tasks phase: %w", err)
		}
		printTasks(res, create.rps())
	}
	if !hasPhase(o.phases, "create") || !hasPhase(o.phases, "raw") {
		return nil
	}
	ratio := create.rps() / raw.rps()
	fmt.Println()
	fmt.Printf("create API/raw ratio %.2f (target ≥ %.1f): %s\n", ratio, targetCreateRatio, verdict(ratio >= targetCreateRatio))
	fmt.Printf("create errors %d (target 0): %s\n", create.errors, verdict(create.errors == 0))
	fmt.Printf("create p99 %s (target ≤ %s): %s\n", create.pct(99), targetCreateP99, verdict(create.pct(99) <= targetCreateP99))
	fmt.Printf("list %.0f req/s (target ≥ %d): %s\n", list.rps(), targetListRPS, verdict(list.rps() >= targetListRPS))
	if list.errors > 0 || create.errors > 0 || raw.errors > 0 {
		fmt.Printf("first errors: list %q, create %q, raw %q\n", list.firstErr, create.firstErr, raw.firstErr)
	}
	return nil
}

// printDeliver reports a delivery phase and its verdicts.
func printDeliver(name string, o deliverOptions, r deliverResult) {
	fmt.Println()
	fmt.Printf("%s: %d issue events (%d per transaction, offered %d/s) to a local receiver, %d worker processes, after %d warm-up events\n",
		name, o.events, o.batch, o.rate, o.workers, o.warmup)
	fmt.Printf("  events emitted in %s (%.0f/s)\n", r.emitted.Round(time.Millisecond), float64(o.events)/r.emitted.Seconds())
	fmt.Printf("  delivered %d distinct, %d duplicates, %d bad signatures, in %s: %.0f deliveries/s\n",
		r.distinct, r.dups, r.badSig, r.elapsed.Round(time.Millisecond), r.perSecond())
	fmt.Printf("  commit-to-receipt p50 %s, p99 %s, max %s\n", r.pct(50), r.pct(99), r.pct(100))
	if r.cpu.busy > 0 && !o.crash && r.distinct > 0 {
		fmt.Printf("  machine CPU (every process) %s, %.0f µs per delivery; stolen by the hypervisor %s (%.0f%% of %d CPUs)\n",
			r.cpu.busy.Round(10*time.Millisecond), float64(r.cpu.busy.Microseconds())/float64(r.distinct),
			r.cpu.steal.Round(10*time.Millisecond), 100*r.cpu.steal.Seconds()/(r.elapsed.Seconds()*float64(runtime.NumCPU())),
			runtime.NumCPU())
	}
	if o.crash {
		fmt.Printf("  worker 1 killed (SIGKILL) after %d deliveries; %d of its jobs rescued by River; queue drained %v after %s\n",
			r.killedAt, r.rescued, r.drained, r.recovered.Round(time.Second))
		fmt.Printf("  every delivery arrived: %s; repeats of a delivery id seen by the receiver: %d\n",
			verdict(r.distinct == o.events), r.dups)
		return
	}
	fmt.Printf("  %.0f deliveries/s (target ≥ %d): %s\n", r.perSecond(), targetDeliveriesPerSecond, verdict(r.perSecond() >= targetDeliveriesPerSecond))
	fmt.Printf("  p99 %s (target ≤ %s): %s\n", r.pct(99), targetDeliveryP99, verdict(r.pct(99) <= targetDeliveryP99))
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// benchJWTSecret signs the bench's tokens; the API and worker processes it starts get it
// as TW_JWT_SECRET, so they accept those tokens.
const benchJWTSecret = "bench-secret-bench-secret-bench-secret!"

// wire builds the server the way cmd/taskweave does for `api`.
func wire(db *store.DB) (*api.Server, error) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	inserter, err := jobs.NewInserter(db.SQL, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return nil, err
	}
	ready := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return migrations.Ready(ctx, db.Pool)
	}
	return api.Wire(api.Settings{
		Config: api.Config{RequestTimeout: 10 * time.Second, BaseURL: "http://localhost",
			AttachmentsDir: benchAttachmentsDir, MaxUploadBytes: 25 << 20},
		JWTSecret: benchJWTSecret, AccessTokenTTL: 15 * time.Minute, RefreshTokenTTL: time.Hour,
		AuthRateLimit: 1000, AuthRateWindow: time.Minute, RegistrationEnabled: true,
		Password: auth.PasswordParams{MemoryKiB: 8 * 1024, Time: 1, Threads: 1},
		Webhook:  webhook.Config{AllowPrivate: true},
	}, log, db, prometheus.NewRegistry(), inserter, ready)
}
