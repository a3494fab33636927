package main

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"

	"github.com/taskweave/taskweave/domain/auth"
)

// MetricsOff is the TW_METRICS_ADDR value that serves no /metrics.
const MetricsOff = "off"

// Config is every setting, read only from the environment (docs/configuration.md).
type Config struct {
	DatabaseURL     string        `env:"TW_DATABASE_URL, default=postgres://postgres@127.0.0.1:5432/taskweave?sslmode=disable"`
	DatabaseMaxConn int32         `env:"TW_DATABASE_MAX_CONNS, default=0"`
	JWTSecret       string        `env:"TW_JWT_SECRET"`
	AccessTokenTTL  time.Duration `env:"TW_ACCESS_TOKEN_TTL, default=15m"`
	RefreshTokenTTL time.Duration `env:"TW_REFRESH_TOKEN_TTL, default=168h"`
	// HTTPAddr and BaseURL default per subcommand (forCommand).
	HTTPAddr       string `env:"TW_HTTP_ADDR"`
	BaseURL        string `env:"TW_BASE_URL"`
	AttachmentsDir string `env:"TW_ATTACHMENTS_DIR, default=./data/attachments"`
	MaxUploadBytes int64  `env:"TW_MAX_UPLOAD_BYTES, default=26214400"`
	// AttachmentDeleteGrace: see api.Config.
	AttachmentDeleteGrace time.Duration `env:"TW_ATTACHMENT_DELETE_GRACE, default=24h"`
	RegistrationEnabled   bool          `env:"TW_REGISTRATION_ENABLED, default=true"`
	AuthRateLimit         int           `env:"TW_AUTH_RATE_LIMIT, default=10"`
	AuthRateWindow        time.Duration `env:"TW_AUTH_RATE_WINDOW, default=60s"`
	// APIRateLimit: requests per minute per credential on the protected API; 0 = off.
	APIRateLimit   int           `env:"TW_API_RATE_LIMIT, default=0"`
	TrustedProxies []string      `env:"TW_TRUSTED_PROXIES"`
	RequestTimeout time.Duration `env:"TW_REQUEST_TIMEOUT, default=10s"`
	// ShutdownDrain: how long a stopping API answers /readyz 503 before it closes its
	// listener; ShutdownGrace: how long in-flight requests then get (api.Server.Shutdown).
	ShutdownDrain time.Duration `env:"TW_SHUTDOWN_DRAIN, default=0s"`
	ShutdownGrace time.Duration `env:"TW_SHUTDOWN_GRACE, default=10s"`
	// DBStartTimeout: how long a starting process waits for the database before it
	// exits non-zero; 0 waits for ever (see waitForDatabase).
	DBStartTimeout time.Duration `env:"TW_DB_START_TIMEOUT, default=0s"`
	// StatementTimeout: 0 = nine tenths of RequestTimeout (see store.OpenAPI).
	StatementTimeout time.Duration `env:"TW_STATEMENT_TIMEOUT, default=0s"`
	// MetricsAddr: empty serves /metrics on TW_HTTP_ADDR, "off" nowhere, an address on a
	// listener of its own (and not on TW_HTTP_ADDR).
	MetricsAddr string `env:"TW_METRICS_ADDR"`

	// Storage is where new attachment files go: disk (TW_ATTACHMENTS_DIR) or s3 (the
	// bucket below); rows on the disk stay readable from TW_ATTACHMENTS_DIR either way.
	Storage string `env:"TW_STORAGE, default=disk"`
	// The S3-compatible bucket (attachment.S3Config). Each key may come from a file
	// (…_FILE, a mounted secret) instead. S3PathStyle empty: true when an endpoint is set.
	S3Endpoint      string `env:"TW_S3_ENDPOINT"`
	S3Bucket        string `env:"TW_S3_BUCKET"`
	S3Region        string `env:"TW_S3_REGION, default=us-east-1"`
	S3AccessKey     string `env:"TW_S3_ACCESS_KEY"`
	S3AccessKeyFile string `env:"TW_S3_ACCESS_KEY_FILE"`
	S3SecretKey     string `env:"TW_S3_SECRET_KEY"`
	S3SecretKeyFile string `env:"TW_S3_SECRET_KEY_FILE"`
	S3PathStyle     string `env:"TW_S3_PATH_STYLE"`
	S3Prefix        string `env:"TW_S3_PREFIX"`
	S3Presign       bool   `env:"TW_S3_PRESIGN, default=false"`
	S3CreateBucket  bool   `env:"TW_S3_CREATE_BUCKET, default=false"`

	OAuthGitHubClientID     string `env:"TW_OAUTH_GITHUB_CLIENT_ID"`
	OAuthGitHubClientSecret string `env:"TW_OAUTH_GITHUB_CLIENT_SECRET"`
	OAuthGoogleClientID     string `env:"TW_OAUTH_GOOGLE_CLIENT_ID"`
	OAuthGoogleClientSecret string `env:"TW_OAUTH_GOOGLE_CLIENT_SECRET"`
	// The built-in providers' addresses, for GitHub Enterprise or a local fake.
	OAuthGitHubAuthURL  string `env:"TW_OAUTH_GITHUB_AUTH_URL, default=https://github.com/login/oauth/authorize"`
	OAuthGitHubTokenURL string `env:"TW_OAUTH_GITHUB_TOKEN_URL, default=https://github.com/login/oauth/access_token"`
	OAuthGitHubAPIURL   string `env:"TW_OAUTH_GITHUB_API_URL, default=https://api.github.com"`
	OAuthGoogleIssuer   string `env:"TW_OAUTH_GOOGLE_ISSUER, default=https://accounts.google.com"`
	// SSOAllowPrivate lets SSO configs' issuers be on loopback and private networks
	// (an identity provider on the company network); an operator's choice, never a
	// config's.
	SSOAllowPrivate bool `env:"TW_SSO_ALLOW_PRIVATE, default=false"`

	WebhookAllowPrivate bool            `env:"TW_WEBHOOK_ALLOW_PRIVATE, default=false"`
	WebhookRetryDelays  []time.Duration `env:"TW_WEBHOOK_RETRY_DELAYS, default=60s,300s"`
	WebhookHeaderPrefix string          `env:"TW_WEBHOOK_HEADER_PREFIX, default=X-Taskweave"`
	WebhookRetention    time.Duration   `env:"TW_WEBHOOK_RETENTION, default=720h"`
	SLAInterval         time.Duration   `env:"TW_SLA_INTERVAL, default=60s"`
	// VacuumInterval: how often a worker looks whether the tables the issue list reads by
	// index-only scans are due a vacuum by autovacuum's own thresholds, and runs it
	// (workers.Vacuumer, docs/operations.md#vacuum); 0 leaves them to autovacuum alone.
	VacuumInterval time.Duration `env:"TW_VACUUM_INTERVAL, default=2s"`
	// Finished River jobs are kept this long after they finished, then River's own
	// cleaner deletes them in small batches (docs/operations.md#retention).
	JobCompletedRetention time.Duration `env:"TW_JOB_COMPLETED_RETENTION, default=24h"`
	JobCancelledRetention time.Duration `env:"TW_JOB_CANCELLED_RETENTION, default=24h"`
	JobDiscardedRetention time.Duration `env:"TW_JOB_DISCARDED_RETENTION, default=168h"`
	// AutomationRetention: automation executions older than this are deleted.
	AutomationRetention time.Duration `env:"TW_AUTOMATION_RETENTION, default=2160h"`
	// AuditRetention: audit months that ended longer ago than this are dropped whole
	// (docs/operations.md#audit-partitions); 0 keeps the audit log forever.
	AuditRetention time.Duration `env:"TW_AUDIT_RETENTION, default=0"`
	// AutomationChainBudget: how many actions the rule runs caused by one change may run.
	AutomationChainBudget int `env:"TW_AUTOMATION_CHAIN_BUDGET, default=100"`
	// AutomationProjectRate: how many actions one project's rules may run per minute (0: no limit).
	AutomationProjectRate int `env:"TW_AUTOMATION_PROJECT_RATE, default=1000"`

	MailIngestEnabled bool          `env:"TW_MAIL_INGEST_ENABLED, default=false"`
	IMAPAddr          string        `env:"TW_IMAP_ADDR"`
	IMAPUser          string        `env:"TW_IMAP_USER"`
	IMAPPassword      string        `env:"TW_IMAP_PASSWORD"`
	MailInterval      time.Duration `env:"TW_MAIL_INTERVAL, default=60s"`
	IMAPMailbox       string        `env:"TW_IMAP_MAILBOX, default=INBOX"`
	IMAPTLS           string        `env:"TW_IMAP_TLS, default=auto"` // auto, tls, starttls or none
	// MailboxAddresses are further addresses the shared mailbox receives at (besides
	// an address-shaped TW_IMAP_USER): no desk may claim them (MailboxOwnAddresses).
	MailboxAddresses []string `env:"TW_MAIL_MAILBOX_ADDRESSES"`
	SMTPAddr         string   `env:"TW_SMTP_ADDR"`
	SMTPFrom         string   `env:"TW_SMTP_FROM"`

	WorkerConcurrency int           `env:"TW_WORKER_CONCURRENCY, default=50"`
	JobTimeout        time.Duration `env:"TW_JOB_TIMEOUT, default=30s"`
	// JobRescueAfter: 0 = TW_JOB_TIMEOUT plus 10 s (see workers.Config).
	JobRescueAfter time.Duration `env:"TW_JOB_RESCUE_AFTER, default=0s"`
	LogLevel       string        `env:"TW_LOG_LEVEL, default=info"`
	// MigrateAcceptCommentEdits: see migrations.Options.
	MigrateAcceptCommentEdits bool `env:"TW_MIGRATE_ACCEPT_COMMENT_EDITS, default=false"`
	// CPUProfile: a worker writes its CPU profile to this file (cpuProfile), for benches.
	CPUProfile string `env:"TW_CPU_PROFILE"`
}

// loadConfig reads the environment and enforces the rules every subcommand shares.
func loadConfig(ctx context.Context, lookup envconfig.Lookuper) (*Config, error) {
	var cfg Config
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: &cfg, Lookuper: lookup}); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	if len(cfg.JWTSecret) < auth.MinSecretLen {
		return nil, fmt.Errorf("TW_JWT_SECRET must be at least %d bytes (got %d)", auth.MinSecretLen, len(cfg.JWTSecret))
	}
	if cfg.MetricsAddr != "" && cfg.MetricsAddr != MetricsOff {
		if _, _, err := net.SplitHostPort(cfg.MetricsAddr); err != nil {
			return nil, fmt.Errorf("TW_METRICS_ADDR must be off or a listen address such as 127.0.0.1:9090 (got %q)", cfg.MetricsAddr)
		}
	}
	if cfg.AutomationChainBudget < 1 || cfg.AutomationProjectRate < 0 {
		return nil, fmt.Errorf("TW_AUTOMATION_CHAIN_BUDGET must be at least 1 and TW_AUTOMATION_PROJECT_RATE at least 0 (0: no limit)")
	}
	if cfg.APIRateLimit < 0 {
		return nil, fmt.Errorf("TW_API_RATE_LIMIT must be at least 0 (0: no limit)")
	}
	if cfg.AuthRateLimit < 1 || cfg.AuthRateWindow <= 0 {
		return nil, fmt.Errorf("TW_AUTH_RATE_LIMIT must be at least 1 and TW_AUTH_RATE_WINDOW positive")
	}
	if (cfg.OAuthGitHubClientID == "") != (cfg.OAuthGitHubClientSecret == "") {
		return nil, fmt.Errorf("TW_OAUTH_GITHUB_CLIENT_ID and TW_OAUTH_GITHUB_CLIENT_SECRET are set together or not at all")
	}
	if (cfg.OAuthGoogleClientID == "") != (cfg.OAuthGoogleClientSecret == "") {
		return nil, fmt.Errorf("TW_OAUTH_GOOGLE_CLIENT_ID and TW_OAUTH_GOOGLE_CLIENT_SECRET are set together or not at all")
	}
	if cfg.RequestTimeout <= 0 {
		return nil, fmt.Errorf("TW_REQUEST_TIMEOUT must be positive (got %s)", cfg.RequestTimeout)
	}
	if cfg.AttachmentDeleteGrace < 0 {
		return nil, fmt.Errorf("TW_ATTACHMENT_DELETE_GRACE must not be negative")
	}
	if cfg.ShutdownDrain < 0 || cfg.ShutdownGrace <= 0 {
		return nil, fmt.Errorf("TW_SHUTDOWN_DRAIN must not be negative and TW_SHUTDOWN_GRACE must be positive")
	}
	if cfg.StatementTimeout == 0 {
		cfg.StatementTimeout = cfg.RequestTimeout * 9 / 10
	}
	if cfg.StatementTimeout < 0 || cfg.StatementTimeout >= cfg.RequestTimeout {
		return nil, fmt.Errorf("TW_STATEMENT_TIMEOUT must be positive and shorter than TW_REQUEST_TIMEOUT (%s), got %s", cfg.RequestTimeout, cfg.StatementTimeout)
	}
	if err := checkMailIngest(&cfg); err != nil {
		return nil, err
	}
	if err := checkStorage(&cfg); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// checkMailIngest refuses an e-mail ingestion that cannot work: switched on without a
// server or account, or with an unknown TLS mode.
func checkMailIngest(cfg *Config) error {
	switch cfg.IMAPTLS {
	case "auto", "tls", "starttls", "none":
	default:
		return fmt.Errorf("TW_IMAP_TLS must be auto, tls, starttls or none (got %q)", cfg.IMAPTLS)
	}
	if cfg.MailIngestEnabled && (cfg.IMAPAddr == "" || cfg.IMAPUser == "") {
		return fmt.Errorf("TW_MAIL_INGEST_ENABLED needs TW_IMAP_ADDR and TW_IMAP_USER")
	}
	return nil
}

// MailboxOwnAddresses are the addresses the shared desk mailbox itself receives at:
// TW_MAIL_MAILBOX_ADDRESSES and TW_IMAP_USER when that is an address. Every process
// (api, worker) reads them, so no desk is enabled with one and no mail is routed by one
// (docs/operations.md#service-desk).
func (c *Config) MailboxOwnAddresses() []string {
	var out []string
	for _, a := range append([]string{c.IMAPUser}, c.MailboxAddresses...) {
		if a = strings.ToLower(strings.TrimSpace(a)); strings.Contains(a, "@") {
			out = append(out, a)
		}
	}
	return out
}

// forCommand fills the defaults that depend on the subcommand: TW_HTTP_ADDR is :8081
// for a worker and :8080 otherwise, and TW_BASE_URL, when unset, is the address the API
// listens on, so `TW_HTTP_ADDR=127.0.0.1:8095 make run` sends SSO callbacks and links
// to that port. A worker's own port serves health and metrics, not the API, so a worker
// takes the API's default address; in production TW_BASE_URL is set on every process.
func (c *Config) forCommand(cmd string) {
	apiAddr := ":8080"
	if cmd == "worker" {
		c.HTTPAddr = cmp.Or(c.HTTPAddr, ":8081")
	} else {
		c.HTTPAddr = cmp.Or(c.HTTPAddr, apiAddr)
		apiAddr = c.HTTPAddr
	}
	c.BaseURL = cmp.Or(c.BaseURL, baseURLFor(apiAddr))
}

// baseURLFor is the http:// address a browser on this machine reaches a listener on addr
// at: localhost for an empty or wildcard host (":8080", "0.0.0.0:8080", "[::]:8080").
func baseURLFor(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://localhost:8080" // the listener refuses the address with a clear error
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
