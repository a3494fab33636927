// Package core is what every area of the API shares: the dependencies handlers call
// (Env), request decoding and validation (Fields), ids and pages, the caller of a request
// (Principal), project access, and the mapping of errors to the wire (Errors). Areas
// (api/account, api/project, ...) import core and domain/, never each other; package api
// wires them into one server.
package core

import (
	"context"
	"database/sql"
	"log/slog"
	"net/http"
	"time"

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
	// CursorKey signs page cursors (CursorKey of TW_JWT_SECRET, the same on every
	// replica); empty: a fixed key (tests).
	CursorKey []byte
}

// Deps are the services the handlers call.
type Deps struct {
	Log     *slog.Logger
	DB      *store.DB
	Auth    *auth.Service
	Authn   *auth.Authenticator
	Limiter *auth.Limiter
	// APILimiter counts every protected request per credential (TW_API_RATE_LIMIT);
	// nil: no such limit.
	APILimiter *auth.Limiter
	Registry   *prometheus.Registry
	// Bus turns domain events into jobs on the request's transaction.
	Bus   *event.Bus
	Audit *audit.Recorder
	// River is the insert-only client on db.SQL; job operations (retry, cancel) use it.
	River *river.Client[*sql.Tx]
	// Webhook is the outgoing webhook configuration.
	Webhook webhook.Config
	// Ready reports whether the database answers and migrations are current.
	Ready func(ctxTimeout time.Duration) error
	// Attachments are where attachment files are kept: the uploads' storage and every
	// storage rows may name (the disk, the bucket).
	Attachments *attachment.Stores
	// RiverUI is River UI's handler (NewRiverUI), mounted at /admin/river/; nil: not
	// mounted.
	RiverUI http.Handler
	// SSO holds the SSO configs and runs the external login flows.
	SSO *sso.Service
}

// Env is what every handler reaches for: the services, the edge's settings and the
// error mapping. Areas embed it in their handlers.
type Env struct {
	Deps
	Cfg    Config
	Errors *Errors
	// UntilHardStop is a context that ends with the request's or when the server's
	// shutdown gives up draining (streams that must not hold the shutdown forever).
	UntilHardStop func(parent context.Context) (context.Context, context.CancelFunc)
}
