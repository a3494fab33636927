// Package sso is single sign-on: OIDC providers an admin registers at run time, the
// built-in GitHub and Google logins, the authorization-code flow with PKCE, and the
// one-time code that hands a finished login to the web client. No flow state lives in
// process memory: the state parameter is a signed token and the codes are rows, so any
// replica can finish a flow another began, and a config saved on one replica is read
// from Postgres by every other at the next authorization request.
package sso

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/webhook"
)

// Built-in registration ids.
const (
	GitHubID = "github"
	GoogleID = "google"
)

// GitHub is the built-in GitHub OAuth 2.0 login; empty ClientID = off. The URLs
// default to github.com and can point elsewhere (GitHub Enterprise, or a test's fake).
type GitHub struct {
	ClientID     string
	ClientSecret string
	AuthURL      string
	TokenURL     string
	APIURL       string
}

// Google is the built-in Google login, by OIDC discovery from Issuer; empty ClientID =
// off.
type Google struct {
	ClientID     string
	ClientSecret string
	Issuer       string
}

// Defaults of the built-in providers' addresses.
const (
	DefaultGitHubAuthURL  = "https://github.com/login/oauth/authorize"
	DefaultGitHubTokenURL = "https://github.com/login/oauth/access_token"
	DefaultGitHubAPIURL   = "https://api.github.com"
	DefaultGoogleIssuer   = "https://accounts.google.com"
)

// Options are the SSO settings that come from configuration.
type Options struct {
	// BaseURL is the public address: redirect URIs are {BaseURL}/login/oauth2/code/{id},
	// and flows end at {BaseURL}/auth/sso/callback.
	BaseURL string
	// JWTSecret keys the secret box and the state signature.
	JWTSecret string
	GitHub    GitHub
	Google    Google
	// ProvisionBuiltIn lets the built-in providers create accounts on first login
	// (TW_REGISTRATION_ENABLED); SSO configs carry their own autoProvision.
	ProvisionBuiltIn bool
	// HTTPClient talks to the built-in providers, whose addresses the operator sets;
	// nil is a client with a 10 s timeout.
	HTTPClient *http.Client
	// AllowPrivate lets SSO configs' issuers be on loopback, private and other
	// non-public addresses (TW_SSO_ALLOW_PRIVATE): an identity provider on the company
	// network. Off, the webhook address rule applies to every config's issuer when it
	// is saved and to every connection made for it.
	AllowPrivate bool
	// Resolver looks issuer hosts up at save and at dial time; nil means
	// net.DefaultResolver (tests give a fake one).
	Resolver webhook.Resolver
	// DiscoveryTTL is how long a discovered issuer (metadata and keys) is reused;
	// 0 is 5 minutes.
	DiscoveryTTL time.Duration
}

// Service holds the SSO configs and runs the login flows.
type Service struct {
	db        *bun.DB
	auth      *auth.Service
	audit     *audit.Recorder
	box       *SecretBox
	state     *stateSigner
	opts      Options
	client    *http.Client
	discovery *discoveryCache
	// checker, guarded and guardedDiscovery serve the SSO configs, whose issuers a
	// system ADMIN sets: the outbound address rule at save and at dial time.
	checker          webhook.Checker
	guarded          *http.Client
	guardedDiscovery *discoveryCache
	now              func() time.Time
}

// NewService wires SSO on the account service, which issues the token pairs.
func NewService(db *bun.DB, accounts *auth.Service, rec *audit.Recorder, opts Options) (*Service, error) {
	if len(opts.JWTSecret) < auth.MinSecretLen {
		return nil, errors.New("sso: the JWT secret is too short")
	}
	box, err := NewSecretBox(opts.JWTSecret)
	if err != nil {
		return nil, err
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	if opts.GitHub.AuthURL == "" {
		opts.GitHub.AuthURL = DefaultGitHubAuthURL
	}
	if opts.GitHub.TokenURL == "" {
		opts.GitHub.TokenURL = DefaultGitHubTokenURL
	}
	if opts.GitHub.APIURL == "" {
		opts.GitHub.APIURL = DefaultGitHubAPIURL
	}
	opts.GitHub.APIURL = strings.TrimRight(opts.GitHub.APIURL, "/")
	if opts.Google.Issuer == "" {
		opts.Google.Issuer = DefaultGoogleIssuer
	}
	if opts.DiscoveryTTL <= 0 {
		opts.DiscoveryTTL = 5 * time.Minute
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	checker := webhook.Checker{AllowPrivate: opts.AllowPrivate, Resolver: opts.Resolver}
	s := &Service{db: db, auth: accounts, audit: rec, box: box, state: newStateSigner(opts.JWTSecret), opts: opts,
		client: client, checker: checker, guarded: guardedClient(checker), now: time.Now}
	s.discovery = newDiscoveryCache(client, opts.DiscoveryTTL, func() time.Time { return s.now() })
	s.guardedDiscovery = newDiscoveryCache(s.guarded, opts.DiscoveryTTL, func() time.Time { return s.now() })
	return s, nil
}

// guardedClient talks to the SSO configs' providers: every connection (discovery,
// keys, token, userinfo, and any redirect's) is dialed by checker's dialer, which
// refuses non-public addresses unless they are allowed; no proxy, which would dial on
// the server's behalf past the check.
func guardedClient(checker webhook.Checker) *http.Client {
	const timeout = 10 * time.Second
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext: checker.DialContext(timeout), ForceAttemptHTTP2: true, MaxIdleConns: 100,
		IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: timeout, ExpectContinueTimeout: time.Second,
	}}
}

// wrap adds context to unexpected errors, leaving sentinels recognisable.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}
