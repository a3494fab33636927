package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/taskweave/taskweave/api"
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
	open := store.Open
	if workerOnly {
		open = store.OpenWorker
	}
	db, err := open(ctx, cfg.DatabaseURL, cfg.DatabaseMaxConn)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		queue.NewCollector(db.Pool, log))
	return &app{cfg: cfg, log: log, db: db, registry: reg}, nil
}

func (a *app) close() { a.db.Close() }

func (a *app) migrate(ctx context.Context) error {
	return migrations.Apply(ctx, a.db.Pool, a.log)
}

func (a *app) ready(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return migrations.Ready(ctx, a.db.Pool)
}

// server builds the API with its insert-only River client (jobs.NewInserter), so jobs
// are inserted on bun's own *sql.Tx.
func (a *app) server() (*api.Server, error) {
	inserter, err := jobs.NewInserter(a.db.SQL, a.log)
	if err != nil {
		return nil, err
	}
	c := a.cfg
	return api.Wire(api.Settings{
		Config: api.Config{TrustedProxies: c.TrustedProxies, RequestTimeout: c.RequestTimeout, BaseURL: c.BaseURL,
			AttachmentsDir: c.AttachmentsDir, MaxUploadBytes: c.MaxUploadBytes, MetricsOff: c.MetricsAddr != ""},
		JWTSecret: c.JWTSecret, AccessTokenTTL: c.AccessTokenTTL, RefreshTokenTTL: c.RefreshTokenTTL,
		RegistrationEnabled: c.RegistrationEnabled, AuthRateLimit: c.AuthRateLimit, AuthRateWindow: c.AuthRateWindow,
		Webhook: a.webhookConfig(),
		OAuthGitHub: sso.GitHub{ClientID: c.OAuthGitHubClientID, ClientSecret: c.OAuthGitHubClientSecret,
			AuthURL: c.OAuthGitHubAuthURL, TokenURL: c.OAuthGitHubTokenURL, APIURL: c.OAuthGitHubAPIURL},
		OAuthGoogle: sso.Google{ClientID: c.OAuthGoogleClientID, ClientSecret: c.OAuthGoogleClientSecret, Issuer: c.OAuthGoogleIssuer},
	}, a.log, a.db, a.registry, inserter, a.ready)
}

// serveAPI runs the HTTP API; withWorker also runs the River workers in-process (`all`).
func (a *app) serveAPI(ctx context.Context, addr string, withWorker bool) error {
	srv, err := a.server()
	if err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	if withWorker {
		if err := a.startWorkers(ctx, g); err != nil {
			return err
		}
	}
	a.serveMetrics(ctx, g)
	g.Go(func() error {
		a.log.Info("api listening", "addr", addr)
		return srv.Listen(addr)
	})
	g.Go(func() error {
		<-ctx.Done()
		return srv.App.ShutdownWithTimeout(10 * time.Second)
	})
	return ignoreClosed(g.Wait())
}

// serveWorker runs the River workers with health and metrics on their own port.
func (a *app) serveWorker(ctx context.Context, addr string) error {
	g, ctx := errgroup.WithContext(ctx)
	if err := a.startWorkers(ctx, g); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"UP"}`))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if err := a.ready(2 * time.Second); err != nil {
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
	hs := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	g.Go(func() error {
		a.log.Info("worker listening", "addr", addr)
		return hs.ListenAndServe()
	})
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return hs.Shutdown(sctx)
	})
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
	hs := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	g.Go(func() error {
		a.log.Info("metrics listening", "addr", addr)
		return hs.ListenAndServe()
	})
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return hs.Shutdown(sctx)
	})
}

func (a *app) startWorkers(ctx context.Context, g *errgroup.Group) error {
	inserter, err := jobs.NewInserter(a.db.SQL, a.log)
	if err != nil {
		return err
	}
	bus := pipeline.New(inserter, pipeline.Config{Webhook: a.webhookConfig()}).Bus
	client, err := workers.NewClient(workers.Config{
		Concurrency: a.cfg.WorkerConcurrency, JobTimeout: a.cfg.JobTimeout, RescueAfter: a.cfg.JobRescueAfter,
		RateLimitWindow: a.cfg.AuthRateWindow,
		Webhook:         a.webhookConfig(),
		Mail:            workers.MailConfig{Addr: a.cfg.SMTPAddr, From: a.cfg.SMTPFrom},
		BaseURL:         a.cfg.BaseURL,
		ServiceDesk:     a.serviceDeskConfig(),
		// Executions older than this are deleted by the periodic cleanup.
		AutomationRetention: a.cfg.AutomationRetention,
		// The chain budget and the per-project rate of automation actions.
		AutomationChainBudget: a.cfg.AutomationChainBudget,
		AutomationProjectRate: a.cfg.AutomationProjectRate,
	}, workers.Deps{Log: a.log, DB: a.db, Registry: a.registry, Bus: bus})
	if err != nil {
		return fmt.Errorf("river client: %w", err)
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
		Mailbox: c.IMAPMailbox, TLS: c.IMAPTLS, Interval: c.MailInterval,
	}}
}
