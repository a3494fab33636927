package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/riverqueue/river"
	"golang.org/x/sync/errgroup"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/pipeline"
	"github.com/taskweave/taskweave/domain/queue"
	"github.com/taskweave/taskweave/domain/servicedesk"
	"github.com/taskweave/taskweave/domain/sso"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/migrations"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/workers"
)

// app is the wiring shared by the subcommands: config, logger, database, metrics.
type app struct {
	cfg      *Config
	log      *slog.Logger
	db       *store.DB
	registry *prometheus.Registry
}

// newApp connects for the subcommand: a worker-only process opens its pool with
// store.OpenWorker.
func newApp(ctx context.Context, cfg *Config, workerOnly bool) (*app, error) {
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(strings.ToUpper(cfg.LogLevel)))
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	var db *store.DB
	var err error
	if workerOnly {
		db, err = store.OpenWorker(ctx, cfg.DatabaseURL, cfg.DatabaseMaxConn)
	} else {
		// api, all and migrate: every statement ends before the request deadline (all's
		// in-process workers share the pool, and with it the limit; their statements
		// are short).
		db, err = store.OpenAPI(ctx, cfg.DatabaseURL, cfg.DatabaseMaxConn, cfg.StatementTimeout)
	}
	if err != nil {
		return nil, err
	}
	// The connection budget of this process (docs/operations.md#scaling): beside its
	// pools, an API holds one connection for LISTEN (the live updates' listener), and so
	// does a worker (River's notifier takes one out of the pool for good, and the pool,
	// which holds its size, opens another in its place).
	listen := 1
	log.Info("database pools", "pool_max_conns", db.Pool.Config().MaxConns, "pool_held_conns", db.Pool.Config().MinConns,
		"keyed_max_conns", db.Keyed.Config().MaxConns, "listen_conns", listen)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		queue.NewCollector(db.Pool, log))
	return &app{cfg: cfg, log: log, db: db, registry: reg}, nil
}

func (a *app) close() { a.db.Close() }

// Backoff of waitForDatabase: the first retry after dbRetryFirst, doubling up to
// dbRetryMax.
const (
	dbRetryFirst = 200 * time.Millisecond
	dbRetryMax   = 5 * time.Second
)

// waitForDatabase returns once the database answers. Every process starts the same way
// whether or not its database is up yet (compose, Kubernetes and a reboot start them in
// any order): it retries with backoff, logging each failure, and gives up with an error
// (a non-zero exit) only after TW_DB_START_TIMEOUT, when that is set.
func (a *app) waitForDatabase(ctx context.Context) error {
	start := time.Now()
	delay := dbRetryFirst
	for attempt := 1; ; attempt++ {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := a.db.Pool.Ping(pctx)
		cancel()
		if err == nil {
			if attempt > 1 {
				a.log.Info("database reachable", "attempts", attempt, "waited", time.Since(start).Round(time.Millisecond).String())
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if t := a.cfg.DBStartTimeout; t > 0 && time.Since(start)+delay > t {
			return fmt.Errorf("database unreachable for %s (TW_DB_START_TIMEOUT): %w", t, err)
		}
		a.log.Warn("database unreachable; retrying", "attempt", attempt, "retry_in", delay.String(), "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, dbRetryMax)
	}
}

// migrate applies the migrations on a pool of their own, without the API's statement
// timeout: a migration may build an index on a large table.
func (a *app) migrate(ctx context.Context) error {
	pool, err := store.OpenMigrator(ctx, a.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	return migrations.ApplyWith(ctx, pool, a.log, migrations.Options{AcceptCommentEdits: a.cfg.MigrateAcceptCommentEdits})
}

func (a *app) ready(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return migrations.Ready(ctx, a.db.Pool)
}

// server builds the API with its insert-only River client (jobs.NewInserter), so jobs
// are inserted on bun's own *sql.Tx.
func (a *app) server(ctx context.Context) (*api.Server, error) {
	inserter, err := jobs.NewInserter(a.db.SQL, a.log)
	if err != nil {
		return nil, err
	}
	files, err := a.uploadStorage(ctx)
	if err != nil {
		return nil, err
	}
	c := a.cfg
	return api.Wire(api.Settings{
		Config: api.Config{TrustedProxies: c.TrustedProxies, RequestTimeout: c.RequestTimeout, BaseURL: c.BaseURL,
			AttachmentsDir: c.AttachmentsDir, MaxUploadBytes: c.MaxUploadBytes, AttachmentDeleteGrace: c.AttachmentDeleteGrace,
			MetricsOff: c.MetricsAddr != "", MailboxAddresses: c.MailboxOwnAddresses()},
		JWTSecret: c.JWTSecret, AccessTokenTTL: c.AccessTokenTTL, RefreshTokenTTL: c.RefreshTokenTTL,
		RegistrationEnabled: c.RegistrationEnabled, AuthRateLimit: c.AuthRateLimit, AuthRateWindow: c.AuthRateWindow,
		APIRateLimit: c.APIRateLimit,
		Webhook:      a.webhookConfig(),
		OAuthGitHub: sso.GitHub{ClientID: c.OAuthGitHubClientID, ClientSecret: c.OAuthGitHubClientSecret,
			AuthURL: c.OAuthGitHubAuthURL, TokenURL: c.OAuthGitHubTokenURL, APIURL: c.OAuthGitHubAPIURL},
		OAuthGoogle:       sso.Google{ClientID: c.OAuthGoogleClientID, ClientSecret: c.OAuthGoogleClientSecret, Issuer: c.OAuthGoogleIssuer},
		SSOAllowPrivate:   c.SSOAllowPrivate,
		AttachmentStorage: files,
	}, a.log, a.db, a.registry, inserter, a.ready)
}

// serveAPI runs the HTTP API; withWorker (`all`) also migrates and then runs the River
// workers in-process. The listener opens first: while the database is unreachable or
// not migrated, /readyz answers 503 and the process waits (waitForDatabase).
func (a *app) serveAPI(ctx context.Context, addr string, withWorker bool) error {
	srv, err := a.server(ctx)
	if err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := a.waitForDatabase(ctx); err != nil || !withWorker {
			return err
		}
		if err := a.migrate(ctx); err != nil {
			return err
		}
		return a.startWorkers(ctx, g)
	})
	a.serveMetrics(ctx, g)
	g.Go(func() error { return srv.RunSweeps(ctx) })
	g.Go(func() error {
		ln, err := a.listen("api", srv.App.Config().Network, addr)
		if err != nil {
			return err
		}
		return srv.App.Listener(api.HeadListener(ln))
	})
	g.Go(func() error {
		<-ctx.Done()
		return srv.Shutdown(a.cfg.ShutdownDrain, a.cfg.ShutdownGrace)
	})
	return ignoreClosed(g.Wait())
}

// serveWorker runs the River workers with health and metrics on their own port. The
// port opens first; the workers start once the database answers (waitForDatabase), and
// /readyz answers 503 until they have.
func (a *app) serveWorker(ctx context.Context, addr string) error {
	g, ctx := errgroup.WithContext(ctx)
	var started atomic.Bool
	g.Go(func() error {
		if err := a.waitForDatabase(ctx); err != nil {
			return err
		}
		if err := a.startWorkers(ctx, g); err != nil {
			return err
		}
		started.Store(true)
		return nil
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"UP"}`))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if err := a.ready(2 * time.Second); err != nil || !started.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"DOWN"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"UP"}`))
	})
	if a.cfg.MetricsAddr == "" {
		mux.Handle("GET /metrics", a.metricsHandler())
	}
	a.serveMetrics(ctx, g)
	a.serveHTTP(ctx, g, "worker", addr, mux)
	return ignoreClosed(g.Wait())
}

func (a *app) metricsHandler() http.Handler {
	return promhttp.HandlerFor(a.registry, promhttp.HandlerOpts{})
}

// serveMetrics serves GET /metrics, and nothing else, on TW_METRICS_ADDR when that is a
// listen address, so a public API port need not expose the process's metrics.
func (a *app) serveMetrics(ctx context.Context, g *errgroup.Group) {
	addr := a.cfg.MetricsAddr
	if addr == "" || addr == MetricsOff {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metricsHandler())
	a.serveHTTP(ctx, g, "metrics", addr, mux)
}

// serveHTTP serves h on addr (the worker's port, the metrics port) until ctx ends, then
// gives requests in flight five seconds. The port is bound before it returns, so once
// a port opened after it answers (the API's), this one does too; a port it cannot bind
// ends the process through g.
func (a *app) serveHTTP(ctx context.Context, g *errgroup.Group, what, addr string, h http.Handler) {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	ln, err := a.listen(what, "tcp", addr)
	if err != nil {
		g.Go(func() error { return err })
		return
	}
	g.Go(func() error { return hs.Serve(ln) })
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return hs.Shutdown(sctx)
	})
}

// listen binds addr and only then logs "<what> listening" with the address bound, so the
// line never announces a port the process failed to get (one another process holds).
func (a *app) listen(what, network, addr string) (net.Listener, error) {
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen on %s: %w", what, addr, err)
	}
	a.log.Info(what+" listening", "addr", ln.Addr().String())
	return ln, nil
}

// workerClient builds the working River client with every worker and periodic job; its
// metrics join the process's registry.
func (a *app) workerClient(ctx context.Context) (*river.Client[pgx.Tx], error) {
	inserter, err := jobs.NewInserter(a.db.SQL, a.log)
	if err != nil {
		return nil, err
	}
	bus := pipeline.New(inserter, pipeline.Config{Webhook: a.webhookConfig()}).Bus
	files, err := a.workerStores(ctx)
	if err != nil {
		return nil, err
	}
	client, err := workers.NewClient(workers.Config{
		Concurrency: a.cfg.WorkerConcurrency, JobTimeout: a.cfg.JobTimeout, RescueAfter: a.cfg.JobRescueAfter,
		RateLimitWindow: a.cfg.AuthRateWindow,
		Webhook:         a.webhookConfig(),
		Mail:            workers.MailConfig{Addr: a.cfg.SMTPAddr, From: a.cfg.SMTPFrom},
		BaseURL:         a.cfg.BaseURL,
		ServiceDesk:     a.serviceDeskConfig(),
		// Executions older than this are deleted by the periodic cleanup.
		AutomationRetention: a.cfg.AutomationRetention,
		AuditRetention:      a.cfg.AuditRetention,
		// The chain budget and the per-project rate of automation actions.
		AutomationChainBudget: a.cfg.AutomationChainBudget,
		AutomationProjectRate: a.cfg.AutomationProjectRate,
		JobRetention: workers.JobRetention{Completed: a.cfg.JobCompletedRetention,
			Cancelled: a.cfg.JobCancelledRetention, Discarded: a.cfg.JobDiscardedRetention},
	}, workers.Deps{Log: a.log, DB: a.db, Registry: a.registry, Bus: bus, Attachments: files})
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return client, nil
}

func (a *app) startWorkers(ctx context.Context, g *errgroup.Group) error {
	client, err := a.workerClient(ctx)
	if err != nil {
		return err
	}
	// River's own context outlives the signal: cancelling the context given to Start
	// would cut every running job off at once, as a failed attempt. Shutdown is soft
	// first (no new fetches, running jobs get workerStopGrace to finish), then hard:
	// since River 0.44 a job cut off by the hard stop goes back to available with its
	// attempt and errors untouched, and the next worker runs it again.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), workerStopGrace)
		defer cancel()
		err := client.Stop(sctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		hctx, hcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer hcancel()
		return client.StopAndCancel(hctx)
	})
	if a.cfg.VacuumInterval > 0 {
		v := &workers.Vacuumer{DB: a.db, Log: a.log, Interval: a.cfg.VacuumInterval}
		g.Go(func() error { return v.Run(ctx) })
	}
	return nil
}

// workerStopGrace is how long a stopping worker lets its running jobs finish before it
// cancels them (a webhook attempt times out after 10 s, so 25 s covers one with room).
const workerStopGrace = 25 * time.Second

func (a *app) webhookConfig() webhook.Config {
	c := a.cfg
	return webhook.Config{
		AllowPrivate: c.WebhookAllowPrivate, RetryDelays: c.WebhookRetryDelays,
		HeaderPrefix: c.WebhookHeaderPrefix, Retention: c.WebhookRetention,
	}.WithDefaults()
}

func ignoreClosed(err error) error {
	if err == nil || errors.Is(err, http.ErrServerClosed) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// serviceDeskConfig is the breach monitor's and the e-mail ingestion's configuration.
func (a *app) serviceDeskConfig() workers.ServiceDeskConfig {
	c := a.cfg
	return workers.ServiceDeskConfig{SLAInterval: c.SLAInterval, Mail: servicedesk.MailboxConfig{
		Enabled: c.MailIngestEnabled, Addr: c.IMAPAddr, Username: c.IMAPUser, Password: c.IMAPPassword,
		Mailbox: c.IMAPMailbox, TLS: c.IMAPTLS, Interval: c.MailInterval, OwnAddresses: c.MailboxOwnAddresses(),
		MaxAttachmentBytes: c.MaxUploadBytes,
	}}
}

// errBackupIncomplete is a restored database with attachment rows whose files are missing.
var errBackupIncomplete = errors.New("backup verify: attachment files are missing")

// verifyBackup is `taskweave backup verify`: after a restore, it checks that the database
// answers with its migrations current and that TW_ATTACHMENTS_DIR or the bucket
// (TW_STORAGE=s3), whichever the row names, holds the file of every attachment row,
// printing each row without its file (docs/operations.md#backups).
func (a *app) verifyBackup(ctx context.Context, out io.Writer) error {
	if err := a.ready(30 * time.Second); err != nil {
		return fmt.Errorf("backup verify: %w", err)
	}
	files, err := a.attachmentStores(ctx)
	if err != nil {
		return err
	}
	checked, missing, err := attachment.Verify(ctx, a.db.Bun, files, func(m attachment.Missing) {
		fmt.Fprintf(out, "missing file: attachment %s of %s (%q, stored as %s)\n", m.ID, m.IssueKey, m.Filename, m.StoredName)
	})
	if err != nil {
		return fmt.Errorf("backup verify: %w", err)
	}
	where := a.cfg.AttachmentsDir
	if a.cfg.Storage == "s3" {
		where += " or bucket " + a.cfg.S3Bucket
	}
	fmt.Fprintf(out, "backup verify: %d attachment rows checked, %d without their file in %s\n", checked, missing, where)
	if missing > 0 {
		return errBackupIncomplete
	}
	return nil
}
