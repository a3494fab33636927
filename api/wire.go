package api

import (
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	adminapi "github.com/taskweave/taskweave/api/admin"
	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/pipeline"
	"github.com/taskweave/taskweave/domain/sso"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/store"
)

// Settings are the configuration values the wiring needs; cmd fills them from the
// environment, tests from literals.
type Settings struct {
	Config
	JWTSecret           string
	AccessTokenTTL      time.Duration
	RefreshTokenTTL     time.Duration
	RegistrationEnabled bool
	AuthRateLimit       int
	AuthRateWindow      time.Duration
	// APIRateLimit is how many requests one credential may make per minute
	// (TW_API_RATE_LIMIT); 0 is no limit.
	APIRateLimit int
	Password     auth.PasswordParams
	// Webhook is the outgoing webhook configuration (URL checks, test pings).
	Webhook webhook.Config
	// AttachmentStorage takes new attachment files (the bucket of TW_STORAGE=s3); nil is
	// the local disk under AttachmentsDir. Rows on the disk are served from
	// AttachmentsDir either way, as long as it can be opened.
	AttachmentStorage attachment.Storage
	// OAuthGitHub and OAuthGoogle are the built-in login providers (TW_OAUTH_*); an
	// empty client id switches one off.
	OAuthGitHub sso.GitHub
	OAuthGoogle sso.Google
	// SSOAllowPrivate lets SSO configs' issuers be on non-public addresses
	// (TW_SSO_ALLOW_PRIVATE): an identity provider on the company network.
	SSOAllowPrivate bool
	// SSOResolver looks SSO issuer hosts up at save and at dial time; nil means
	// net.DefaultResolver (tests give a fake one).
	SSOResolver webhook.Resolver
}

// Wire builds the domain services on db and the API over them. inserter is the
// insert-only River client (jobs.NewInserter on db.SQL); the event bus and its
// consumers come from domain/pipeline, as in the worker process.
func Wire(s Settings, log *slog.Logger, db *store.DB, reg *prometheus.Registry, inserter *river.Client[*sql.Tx], ready func(time.Duration) error) (*Server, error) {
	p := pipeline.New(inserter, pipeline.Config{Webhook: s.Webhook})
	bus, rec := p.Bus, p.Audit
	tokens, err := auth.NewTokens(s.JWTSecret, s.AccessTokenTTL, s.RefreshTokenTTL)
	if err != nil {
		return nil, err
	}
	if s.Password == (auth.PasswordParams{}) {
		s.Password = auth.DefaultPasswordParams
	}
	svc, err := auth.NewService(db.Bun, tokens, rec, auth.Options{RegistrationEnabled: s.RegistrationEnabled, Password: s.Password})
	if err != nil {
		return nil, fmt.Errorf("auth service: %w", err)
	}
	single, err := sso.NewService(db.Bun, svc, rec, sso.Options{BaseURL: s.BaseURL, JWTSecret: s.JWTSecret,
		GitHub: s.OAuthGitHub, Google: s.OAuthGoogle, ProvisionBuiltIn: s.RegistrationEnabled,
		AllowPrivate: s.SSOAllowPrivate, Resolver: s.SSOResolver})
	if err != nil {
		return nil, fmt.Errorf("sso service: %w", err)
	}
	files, err := attachmentStores(s, log)
	if err != nil {
		return nil, err
	}
	ui, err := adminapi.NewRiverUI(db, log)
	if err != nil {
		return nil, err
	}
	var apiLimiter *auth.Limiter
	if s.APIRateLimit > 0 {
		apiLimiter = auth.NewLimiter(db.Bun, s.APIRateLimit, time.Minute)
	}
	s.Config.CursorKey = core.CursorKey(s.JWTSecret)
	return New(s.Config, Deps{
		Log: log, DB: db, Auth: svc, Authn: auth.NewAuthenticator(db.Bun, tokens),
		Limiter: auth.NewLimiter(db.Bun, s.AuthRateLimit, s.AuthRateWindow), APILimiter: apiLimiter, Registry: reg, Ready: ready,
		Bus: bus, Audit: rec, River: inserter, Webhook: s.Webhook.WithDefaults(), Attachments: files, SSO: single,
		RiverUI: ui,
	}), nil
}

// attachmentStores takes uploads into s.AttachmentStorage (or the disk) and serves
// rows from the disk too. With a bucket for uploads a disk that cannot be opened is
// logged, not fatal: a deployment that never had files on disk needs no directory.
func attachmentStores(s Settings, log *slog.Logger) (*attachment.Stores, error) {
	local, err := attachment.NewLocal(s.AttachmentsDir)
	switch {
	case s.AttachmentStorage == nil && err != nil:
		return nil, err
	case s.AttachmentStorage == nil:
		return attachment.NewStores(local), nil
	case err != nil:
		log.Warn("attachments on the disk cannot be served", "err", err)
		return attachment.NewStores(s.AttachmentStorage), nil
	}
	return attachment.NewStores(s.AttachmentStorage, local), nil
}
