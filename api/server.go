// Package api is Taskweave's HTTP edge: Fiber routes, middleware, request decoding and
// the mapping of domain errors to the wire format. Rules live in domain/.
package api

import (
	"database/sql"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/sso"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/store"
)

// Config is the part of the configuration the edge needs.
type Config struct {
	// TrustedProxies are addresses whose X-Forwarded-For is believed (rate limits, audit).
	TrustedProxies []string
	RequestTimeout time.Duration
	BodyLimit      int
	BaseURL        string
	// AttachmentsDir is the root of the local attachment storage (TW_ATTACHMENTS_DIR).
	AttachmentsDir string
	// MaxUploadBytes is the per-file upload limit (TW_MAX_UPLOAD_BYTES); larger → 413.
	MaxUploadBytes int64
	// AttachmentDeleteGrace is how long a deleted attachment's file stays in storage
	// (TW_ATTACHMENT_DELETE_GRACE): longer than a backup takes.
	AttachmentDeleteGrace time.Duration
	// MetricsOff leaves /metrics off the API's port: TW_METRICS_ADDR turned it off or
	// gave it a listener of its own.
	MetricsOff bool
	// HeadTimeout bounds the reading of a request's line and headers, from the
	// connection's accept or the request's first byte (default 30 s): a client that
	// opens connections and trickles or withholds headers cannot hold them forever.
	// Bodies have their own idle limit (bodyIdleTimeout), refreshed while bytes arrive,
	// so a long upload is not cut. Upgraded (STOMP) connections drop both.
	HeadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no next request (default 2 min).
	IdleTimeout time.Duration
	// MailboxAddresses are the shared desk mailbox's own addresses, lower case: no desk
	// may be enabled with one (TW_MAIL_MAILBOX_ADDRESSES, TW_IMAP_USER).
	MailboxAddresses []string
}

// Deps are the services the handlers call.
type Deps struct {
	Log      *slog.Logger
	DB       *store.DB
	Auth     *auth.Service
	Authn    *auth.Authenticator
	Limiter  *auth.Limiter
	Registry *prometheus.Registry
	// Bus turns domain events into jobs on the request's transaction.
	Bus   *event.Bus
	Audit *audit.Recorder
	// River is the insert-only client on db.SQL; job operations (retry, cancel) use it.
	River *river.Client[*sql.Tx]
	// Webhook is the outgoing webhook configuration.
	Webhook webhook.Config
	// Ready reports whether the database answers and migrations are current.
	Ready func(ctxTimeout time.Duration) error
	// Attachments is where attachment files are kept.
	Attachments attachment.Storage
	// RiverUI is River UI's handler (NewRiverUI), mounted at /admin/river/; nil: not
	// mounted.
	RiverUI http.Handler
	// SSO holds the SSO configs and runs the external login flows.
	SSO *sso.Service
}

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
	boards  *boardCache
	cfg     Config
	deps    Deps
	stop    stopping
	// failures logs 5xx answers, unavailable-database ones at a bounded rate.
	failures *failureLog
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
		metrics: newHTTPMetrics(d.Registry), boards: newBoardCache(boardCacheBudget), stop: newStopping(),
		failures: newFailureLog(d.Log)}
	fc := fiber.Config{
		AppName:               "taskweave",
		DisableStartupMessage: true,
		BodyLimit:             cfg.BodyLimit,
		JSONEncoder:           json.Marshal,
		JSONDecoder:           json.Unmarshal,
		ErrorHandler: func(c *fiber.Ctx, err error) error {
			writeError(c, s.failures, err)
			return nil
		},
	}
	// Bodies arrive as a stream so an upload never sits whole in memory; bodyGuard reads
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
	app.Use(s.bodyGuard)
	s.operationalRoutes(app)
	s.docsRoutes(app)
	s.opsRoutes(app)
	s.riverUIRoutes(app)
	s.stompRoutes(app)

	v1 := app.Group("/api/v1", s.authenticate)
	v1.Post("/auth/register", s.rateLimited, s.register)
	v1.Post("/auth/login", s.rateLimited, s.login)
	v1.Post("/auth/refresh", s.refresh)
	s.ssoPublicRoutes(v1)
	s.incomingRoutes(v1)
	s.serviceDeskPublicRoutes(v1)

	v1.Use(s.requireUser)
	v1.Post("/auth/logout", s.logout)
	v1.Get("/auth/me", s.me)
	v1.Patch("/me", s.updateMe)
	v1.Delete("/me", s.deleteMe)
	v1.Post("/me/password", s.changePassword)
	v1.Post("/me/sign-out-everywhere", s.signOutEverywhere)
	v1.Patch("/me/language", s.setLanguage)
	v1.Get("/me/notification-preferences", s.getPreferences)
	v1.Put("/me/notification-preferences", s.putPreferences)
	v1.Get("/me/tokens", s.listTokens)
	v1.Post("/me/tokens", s.createToken)
	v1.Delete("/me/tokens/:id", s.revokeToken)
	s.ssoMeRoutes(v1)

	s.projectRoutes(v1)
	s.workflowRoutes(v1)
	s.issueRoutes(v1)
	s.customFieldRoutes(v1)
	s.webhookRoutes(v1)
	s.integrationRoutes(v1)
	s.sprintRoutes(v1)
	s.reportRoutes(v1)
	s.commentRoutes(v1)
	s.attachmentRoutes(v1)
	s.notificationRoutes(v1)
	s.serviceDeskRoutes(v1)
	s.taskRoutes(v1)

	admin := v1.Group("/admin", s.requireAdmin)
	admin.Get("/users", s.listUsers)
	admin.Post("/users/:id/deactivate", s.deactivateUser)
	admin.Post("/users/:id/activate", s.activateUser)
	admin.Delete("/users/:id", s.deleteUser)
	admin.Post("/users/:id/sign-out", s.signOutUser)
	s.ssoAdminRoutes(admin)
	s.auditRoutes(v1, admin)
	s.jobRoutes(admin)
	s.automationRoutes(v1, admin)
	s.serviceDeskAdminRoutes(admin)
}

// Bus is the event bus the handlers emit on; the load generator emits on it directly.
func (s *Server) Bus() *event.Bus { return s.bus }
