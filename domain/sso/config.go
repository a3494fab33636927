package sso

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/store"
)

// Config is an SSO configuration as admins see it; the secret never leaves the server.
type Config struct {
	ID            uuid.UUID
	Name          string
	IssuerURL     string
	ClientID      string
	Enabled       bool
	AutoProvision bool
	// AllowedDomains are the e-mail domains this registration is trusted for: a first
	// login whose verified e-mail is in one links the existing account with that e-mail
	// (never a system ADMIN's). Empty: never.
	AllowedDomains []string
	HasSecret      bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func toConfig(r *store.SSOConfig) Config {
	domains := r.AllowedDomains
	if domains == nil {
		domains = []string{}
	}
	return Config{ID: r.ID, Name: r.Name, IssuerURL: r.IssuerURL, ClientID: r.ClientID, Enabled: r.Enabled,
		AutoProvision: r.AutoProvision, AllowedDomains: domains, HasSecret: r.ClientSecretEnc != "", CreatedAt: r.CreatedAt,
		UpdatedAt: r.UpdatedAt}
}

// Field limits of a config (docs/api-conventions.md#limits).
const (
	MaxNameLength     = 100
	MaxIssuerLength   = 500
	MaxClientIDLength = 255
	// MaxAllowedDomains bounds a config's allowedDomains.
	MaxAllowedDomains = 50
)

// domainLabel is one label of a DNS name: letters, digits and inner hyphens.
var domainLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// NormalizeDomain reads s as an e-mail domain for allowedDomains: trimmed, lower case,
// at least two labels, no trailing dot, at most 253 characters. ok is false for
// anything else (a wildcard, an address, a URL).
func NormalizeDomain(s string) (string, bool) {
	d := strings.ToLower(strings.TrimSpace(s))
	if d == "" || len(d) > 253 {
		return "", false
	}
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return "", false
	}
	for _, l := range labels {
		if !domainLabel.MatchString(l) {
			return "", false
		}
	}
	return d, true
}

// ValidIssuer reports whether s can be an OIDC issuer: an absolute http or https URL
// with a host and without query or fragment (discovery appends
// /.well-known/openid-configuration to it).
func ValidIssuer(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil &&
		u.RawQuery == "" && u.Fragment == "" && !strings.ContainsAny(s, " \t\r\n")
}

// NewConfig is a validated create request.
type NewConfig struct {
	Name          string
	IssuerURL     string
	ClientID      string
	ClientSecret  string
	Enabled       bool
	AutoProvision bool
	// AllowedDomains are normalized (NormalizeDomain) and without duplicates.
	AllowedDomains []string
}

// ConfigChange is a validated update; nil members stay unchanged.
type ConfigChange struct {
	Name          *string
	IssuerURL     *string
	ClientID      *string
	ClientSecret  *string
	Enabled       *bool
	AutoProvision *bool
	// AllowedDomains, when not nil, replaces the list (empty clears it).
	AllowedDomains []string
}

// Configs lists every config by name.
func (s *Service) Configs(ctx context.Context) ([]Config, error) {
	var rows []store.SSOConfig
	if err := s.db.NewSelect().Model(&rows).Order("name", "id").Scan(ctx); err != nil {
		return nil, wrap("list sso configs", store.Translate(err))
	}
	out := make([]Config, 0, len(rows))
	for i := range rows {
		out = append(out, toConfig(&rows[i]))
	}
	return out, nil
}

// ConfigByID reads one config.
func (s *Service) ConfigByID(ctx context.Context, id uuid.UUID) (Config, error) {
	var row store.SSOConfig
	if err := s.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx); err != nil {
		if err = store.Translate(err); store.IsNotFound(err) {
			return Config{}, ErrConfigNotFound
		}
		return Config{}, wrap("load sso config", err)
	}
	return toConfig(&row), nil
}

// CreateConfig stores a config with its secret sealed. It is used from the next
// authorization request on, on every replica.
func (s *Service) CreateConfig(ctx context.Context, c NewConfig) (Config, error) {
	if err := s.checkIssuer(ctx, c.IssuerURL); err != nil {
		return Config{}, err
	}
	sealed, err := s.box.Seal(c.ClientSecret)
	if err != nil {
		return Config{}, err
	}
	domains := c.AllowedDomains
	if domains == nil {
		domains = []string{}
	}
	row := store.SSOConfig{Name: strings.TrimSpace(c.Name), IssuerURL: strings.TrimSpace(c.IssuerURL),
		ClientID: strings.TrimSpace(c.ClientID), ClientSecretEnc: sealed, Enabled: c.Enabled, AutoProvision: c.AutoProvision,
		AllowedDomains: domains}
	if _, err := s.db.NewInsert().Model(&row).Returning("*").Exec(ctx); err != nil {
		return Config{}, wrap("create sso config", store.Translate(err))
	}
	return toConfig(&row), nil
}

// UpdateConfig changes a config; a new secret is sealed like on create.
func (s *Service) UpdateConfig(ctx context.Context, id uuid.UUID, c ConfigChange) (Config, error) {
	var row store.SSOConfig
	q := s.db.NewUpdate().Model(&row).Set("updated_at = now()").Where("id = ?", id).Returning("*")
	if c.Name != nil {
		q = q.Set("name = ?", strings.TrimSpace(*c.Name))
	}
	if c.IssuerURL != nil {
		if err := s.checkIssuer(ctx, *c.IssuerURL); err != nil {
			return Config{}, err
		}
		q = q.Set("issuer_url = ?", strings.TrimSpace(*c.IssuerURL))
	}
	if c.ClientID != nil {
		q = q.Set("client_id = ?", strings.TrimSpace(*c.ClientID))
	}
	if c.ClientSecret != nil {
		sealed, err := s.box.Seal(*c.ClientSecret)
		if err != nil {
			return Config{}, err
		}
		q = q.Set("client_secret_enc = ?", sealed)
	}
	if c.Enabled != nil {
		q = q.Set("enabled = ?", *c.Enabled)
	}
	if c.AutoProvision != nil {
		q = q.Set("auto_provision = ?", *c.AutoProvision)
	}
	if c.AllowedDomains != nil {
		q = q.Set("allowed_domains = ?", pgdialect.Array(c.AllowedDomains))
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return Config{}, wrap("update sso config", store.Translate(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Config{}, ErrConfigNotFound
	}
	return toConfig(&row), nil
}

// DeleteConfig removes a config and the links to it. Users it created keep their
// accounts and sign in with another method; a new config for the same issuer links
// them again only as any first login does (docs/api-conventions.md#single-sign-on).
func (s *Service) DeleteConfig(ctx context.Context, id uuid.UUID) error {
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewDelete().Model((*store.SSOConfig)(nil)).Where("id = ?", id).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrConfigNotFound
		}
		_, err = tx.NewDelete().Table("sso_identities").Where("provider = ?", id.String()).Exec(ctx)
		return err
	})
	if errors.Is(err, ErrConfigNotFound) {
		return err
	}
	return wrap("delete sso config", store.Translate(err))
}

// checkIssuer applies the outbound address rule (webhook.Checker) to an issuer URL
// being saved, unless private identity providers are allowed (TW_SSO_ALLOW_PRIVATE).
// The same rule guards every connection made for the config later, so a name that
// resolves elsewhere after the save is refused then.
func (s *Service) checkIssuer(ctx context.Context, issuer string) error {
	if err := s.checker.Check(ctx, strings.TrimSpace(issuer)); err != nil {
		return fmt.Errorf("%w: %s", ErrIssuerRejected, strings.TrimPrefix(err.Error(), webhook.ErrURLRejected.Error()+": "))
	}
	return nil
}

// PublicProvider is one login button of the web client's login page.
type PublicProvider struct {
	ID   string
	Name string
}

// PublicProviders lists the enabled configs by name, then the configured built-in
// providers; nothing configured is an empty list.
func (s *Service) PublicProviders(ctx context.Context) ([]PublicProvider, error) {
	var rows []store.SSOConfig
	err := s.db.NewSelect().Model(&rows).Column("id", "name").Where("enabled").Order("name", "id").Scan(ctx)
	if err != nil {
		return nil, wrap("list public sso configs", store.Translate(err))
	}
	out := make([]PublicProvider, 0, len(rows)+2)
	for _, r := range rows {
		out = append(out, PublicProvider{ID: r.ID.String(), Name: r.Name})
	}
	if s.opts.GitHub.ClientID != "" {
		out = append(out, PublicProvider{ID: GitHubID, Name: "GitHub"})
	}
	if s.opts.Google.ClientID != "" {
		out = append(out, PublicProvider{ID: GoogleID, Name: "Google"})
	}
	return out, nil
}
