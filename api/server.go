// Package api is Taskweave's HTTP edge: Fiber routes, middleware, request decoding and
// the mapping of domain errors to the wire format. Rules live in domain/.
package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	accountapi "github.com/taskweave/taskweave/api/account"
	adminapi "github.com/taskweave/taskweave/api/admin"
	automationapi "github.com/taskweave/taskweave/api/automation"
	"github.com/taskweave/taskweave/api/core"
	integrationapi "github.com/taskweave/taskweave/api/integration"
	projectapi "github.com/taskweave/taskweave/api/project"
	reportapi "github.com/taskweave/taskweave/api/report"
	servicedeskapi "github.com/taskweave/taskweave/api/servicedesk"
	workapi "github.com/taskweave/taskweave/api/work"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/idempotency"
	"github.com/taskweave/taskweave/store"
)

// Config is the part of the configuration the edge needs (core.Config).
type Config = core.Config

// Deps are the services the handlers call (core.Deps).
type Deps = core.Deps

// Server holds the Fiber app and what its handlers need.
type Server struct {
	App     *fiber.App
	log     *slog.Logger
	db      *store.DB
	auth    *auth.Service
	authn   *auth.Authenticator
	limiter *auth.Limiter
	bus     *event.Bus
	audit   *audit.Recorder
	metrics *httpMetrics
	cfg     Config
	deps    Deps
	stop    stopping
	// failures logs 5xx answers, unavailable-database ones at a bounded rate.
	failures *core.FailureLog
	// env is what the areas' handlers share.
	env *core.Env
	// keys are the Idempotency-Key records (idempotent).
	keys *idempotency.Keys
}

// errorTables are every area's error table, consulted in this order after core.Table.
func errorTables() []core.ErrorTable {
	return []core.ErrorTable{accountapi.Errors, projectapi.Errors, workapi.Errors, reportapi.Errors,
		integrationapi.Errors, servicedeskapi.Errors, automationapi.Errors, adminapi.Errors}
}

// New builds the app with every route registered.
func New(cfg Config, d Deps) *Server {
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 10 * time.Second
	}
	if cfg.HeadTimeout == 0 {
		cfg.HeadTimeout = 30 * time.Second
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = 2 * time.Minute
	}
	if cfg.BodyLimit == 0 {
		cfg.BodyLimit = 4 << 20
	}
	s := &Server{log: d.Log, db: d.DB, auth: d.Auth, authn: d.Authn, limiter: d.Limiter, cfg: cfg, deps: d, bus: d.Bus, audit: d.Audit,
		metrics: newHTTPMetrics(d.Registry), stop: newStopping(),
		failures: core.NewFailureLog(d.Log), keys: idempotency.NewKeys(d.DB.Bun)}
	s.env = &core.Env{Deps: d, Cfg: cfg, Errors: core.NewErrors(errorTables()...), UntilHardStop: s.untilHardStop}
	fc := fiber.Config{
		AppName:               "taskweave",
		DisableStartupMessage: true,
		BodyLimit:             cfg.BodyLimit,
		JSONEncoder:           json.Marshal,
		JSONDecoder:           json.Unmarshal,
		ErrorHandler: func(c *fiber.Ctx, err error) error {
			s.env.Errors.Write(c, s.failures, err)
			return nil
		},
	}
	// Bodies arrive as a stream so an upload never sits whole in memory; core.BodyGuard reads
	// every other body into memory up to BodyLimit, as fasthttp would. fasthttp must not
	// pre-parse multipart bodies either (it would spool the upload to memory and disk).
	fc.StreamRequestBody = true
	fc.DisablePreParseMultipartForm = true
	fc.ReadBufferSize = maxRequestHead
	// fasthttp's read timeout is a deadline set before each request's head is read;
	// streamBody moves it while a body arrives and clears it after the request, and a
	// hijacked (websocket) connection has it cleared. No write timeout: downloads and
	// exports stream for as long as they take.
	fc.ReadTimeout, fc.IdleTimeout = cfg.HeadTimeout, cfg.IdleTimeout
	if len(cfg.TrustedProxies) > 0 {
		fc.EnableTrustedProxyCheck = true
		fc.TrustedProxies = cfg.TrustedProxies
		fc.ProxyHeader = fiber.HeaderXForwardedFor
		fc.EnableIPValidation = true
	}
	s.App = fiber.New(fc)
	// A reply written after the shutdown began closes its connection (closeWhileDraining
	// says so from the drain's start; this covers fasthttp's own replies).
	s.App.Server().CloseOnShutdown = true
	s.guardServer()
	s.routes()
	return s
}

// routes registers every endpoint. Public routes come before requireUser, which guards
// everything registered after it under /api/v1; a test pins the public set.
func (s *Server) routes() {
	app := s.App
	app.Use(s.edge)
	app.Use(core.BodyGuard(s.cfg.BodyLimit, workapi.IsUploadRoute))
	s.operationalRoutes(app)
	s.docsRoutes(app)
	adminapi.PageRoutes(app, s.env)
	s.stompRoutes(app)

	v1 := app.Group("/api/v1", s.authenticate)
	accountapi.PublicRoutes(app, v1, s.env)
	integrationapi.PublicRoutes(v1, s.env)
	servicedeskapi.PublicRoutes(v1, s.env)

	v1.Use(s.requireUser, s.apiRateLimited, s.idempotent, s.conditional)
	accountapi.Routes(v1, s.env)

	projectapi.Routes(v1, s.env)
	workapi.Routes(v1, s.env)
	integrationapi.Routes(v1, s.env)
	reportapi.Routes(v1, s.env)
	servicedeskapi.Routes(v1, s.env)

	admin := v1.Group("/admin", core.RequireAdmin)
	adminapi.Routes(v1, admin, s.env)
	accountapi.AdminRoutes(admin, s.env)
	automationapi.Routes(v1, admin, s.env)
	servicedeskapi.AdminRoutes(admin, s.env)
}

// Bus is the event bus the handlers emit on; the load generator emits on it directly.
func (s *Server) Bus() *event.Bus { return s.bus }

// SweepAttachments removes the files of attachments deleted longer than
// Config.AttachmentDeleteGrace ago (work.SweepAttachments).
func (s *Server) SweepAttachments(ctx context.Context) (int, error) {
	return workapi.SweepAttachments(ctx, s.env)
}

// RunSweeps sweeps deleted attachments' files now and then until ctx ends
// (work.RunSweeps).
func (s *Server) RunSweeps(ctx context.Context) error { return workapi.RunSweeps(ctx, s.env) }
