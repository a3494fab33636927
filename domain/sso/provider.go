package sso

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/taskweave/taskweave/store"
)

// provider is a registration resolved for one request: an SSO config read from
// Postgres just now, or a built-in.
type provider struct {
	// id is the registration id, stored as users.oauth_provider.
	id            string
	autoProvision bool
	// allowedDomains are the e-mail domains whose accounts a first login may link
	// automatically (an SSO config's allowedDomains; none for the built-ins).
	allowedDomains []string
	oauth          oauth2.Config
	// oidc is the discovered issuer; nil for GitHub, which is plain OAuth 2.0.
	oidc *oidc.Provider
	// client talks to this provider: the address-checked one for SSO configs.
	client *http.Client
}

// trusts reports whether the registration may link an existing account with the
// verified e-mail email automatically: its domain is one of allowedDomains, exactly.
func (p *provider) trusts(email string) bool {
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return false
	}
	domain := email[at+1:]
	for _, d := range p.allowedDomains {
		if d == domain {
			return true
		}
	}
	return false
}

// identity is who the provider says signed in.
type identity struct {
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
	Picture       string
}

// redirectURL is where a provider sends the browser back to.
func (s *Service) redirectURL(registration string) string {
	return s.opts.BaseURL + "/login/oauth2/code/" + registration
}

// oidcScopes are the scopes of every OIDC login.
var oidcScopes = []string{oidc.ScopeOpenID, "profile", "email"}

// resolve finds the registration: the built-ins by name, else an enabled SSO config
// read from Postgres on every call. Unknown, malformed and disabled ids are alike.
func (s *Service) resolve(ctx context.Context, registration string) (*provider, error) {
	switch registration {
	case GitHubID:
		g := s.opts.GitHub
		if g.ClientID == "" {
			return nil, flowError(ReasonUnknownProvider, nil)
		}
		return &provider{id: GitHubID, autoProvision: s.opts.ProvisionBuiltIn, client: s.client, oauth: oauth2.Config{
			ClientID: g.ClientID, ClientSecret: g.ClientSecret, RedirectURL: s.redirectURL(GitHubID),
			Endpoint: oauth2.Endpoint{AuthURL: g.AuthURL, TokenURL: g.TokenURL, AuthStyle: oauth2.AuthStyleInParams},
			Scopes:   []string{"read:user", "user:email"},
		}}, nil
	case GoogleID:
		g := s.opts.Google
		if g.ClientID == "" {
			return nil, flowError(ReasonUnknownProvider, nil)
		}
		p, err := s.oidcProvider(ctx, s.discovery, GoogleID, g.Issuer, g.ClientID, g.ClientSecret)
		if err != nil {
			return nil, err
		}
		p.autoProvision, p.client = s.opts.ProvisionBuiltIn, s.client
		return p, nil
	}
	id, err := uuid.Parse(registration)
	if err != nil || len(registration) != 36 {
		return nil, flowError(ReasonUnknownProvider, nil)
	}
	var row store.SSOConfig
	if err := s.db.NewSelect().Model(&row).Where("id = ? AND enabled", id).Scan(ctx); err != nil {
		if err = store.Translate(err); store.IsNotFound(err) {
			return nil, flowError(ReasonUnknownProvider, nil)
		}
		return nil, fmt.Errorf("load sso config: %w", err)
	}
	secret, err := s.box.Open(row.ClientSecretEnc)
	if err != nil {
		return nil, flowError(ReasonProviderError, fmt.Errorf("sso config %s: %w", row.ID, err))
	}
	p, err := s.oidcProvider(ctx, s.guardedDiscovery, row.ID.String(), row.IssuerURL, row.ClientID, secret)
	if err != nil {
		return nil, err
	}
	p.autoProvision, p.allowedDomains, p.client = row.AutoProvision, row.AllowedDomains, s.guarded
	return p, nil
}

// oidcProvider discovers issuer through cache (the built-ins' or the address-checked
// one of the SSO configs).
func (s *Service) oidcProvider(ctx context.Context, cache *discoveryCache, id, issuer, clientID, secret string) (*provider, error) {
	op, err := cache.provider(ctx, issuer)
	if err != nil {
		return nil, flowError(ReasonProviderError, fmt.Errorf("discover %s: %w", issuer, err))
	}
	return &provider{id: id, oidc: op, oauth: oauth2.Config{
		ClientID: clientID, ClientSecret: secret, RedirectURL: s.redirectURL(id), Endpoint: op.Endpoint(), Scopes: oidcScopes,
	}}, nil
}

// authCodeURL is the provider's authorization address for a flow: PKCE S256 always,
// and the nonce for OIDC.
func (s *Service) authCodeURL(p *provider, state string, f flow) string {
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(s.state.derive("pkce", f))}
	if p.oidc != nil {
		opts = append(opts, oidc.Nonce(s.state.derive("nonce", f)))
	}
	return p.oauth.AuthCodeURL(state, opts...)
}

// identify redeems the authorization code and says who signed in.
func (s *Service) identify(ctx context.Context, p *provider, code string, f flow) (identity, error) {
	ctx = oidc.ClientContext(ctx, p.client)
	tok, err := p.oauth.Exchange(ctx, code, oauth2.VerifierOption(s.state.derive("pkce", f)))
	if err != nil {
		return identity{}, flowError(ReasonProviderError, fmt.Errorf("token exchange with %s: %w", p.id, err))
	}
	if p.oidc == nil {
		return s.githubIdentity(ctx, tok)
	}
	return s.oidcIdentity(ctx, p, tok, f)
}

// oidcClaims are the ID token (or userinfo) claims Taskweave reads.
type oidcClaims struct {
	Email             string          `json:"email"`
	EmailVerified     json.RawMessage `json:"email_verified"`
	Name              string          `json:"name"`
	PreferredUsername string          `json:"preferred_username"`
	Picture           string          `json:"picture"`
}

// verified reads email_verified, which some providers send as the string "true".
func (c *oidcClaims) verified() bool {
	v := strings.Trim(strings.TrimSpace(string(c.EmailVerified)), `"`)
	return strings.EqualFold(v, "true")
}

// oidcIdentity verifies the ID token (signature, issuer, audience, expiry, and the
// flow's nonce) and reads its claims. When the ID token names no e-mail, the userinfo
// endpoint (for the same subject) is asked.
func (s *Service) oidcIdentity(ctx context.Context, p *provider, tok *oauth2.Token, f flow) (identity, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return identity{}, flowError(ReasonProviderError, fmt.Errorf("%s: no id_token in the token response", p.id))
	}
	idt, err := p.oidc.Verifier(&oidc.Config{ClientID: p.oauth.ClientID, Now: s.now}).Verify(ctx, raw)
	if err != nil {
		return identity{}, flowError(ReasonProviderError, fmt.Errorf("%s: id token: %w", p.id, err))
	}
	if idt.Nonce != s.state.derive("nonce", f) {
		return identity{}, flowError(ReasonProviderError, fmt.Errorf("%s: id token nonce does not match the flow", p.id))
	}
	var c oidcClaims
	if err := idt.Claims(&c); err != nil {
		return identity{}, flowError(ReasonProviderError, fmt.Errorf("%s: id token claims: %w", p.id, err))
	}
	if c.Email == "" && p.oidc.UserInfoEndpoint() != "" {
		if info, err := p.oidc.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err == nil && info.Subject == idt.Subject {
			var uc oidcClaims
			if info.Claims(&uc) == nil && uc.Email != "" {
				c.Email, c.EmailVerified = uc.Email, uc.EmailVerified
				if c.Name == "" {
					c.Name = uc.Name
				}
			}
		}
	}
	name := c.Name
	if name == "" {
		name = c.PreferredUsername
	}
	return identity{Subject: idt.Subject, Email: c.Email, EmailVerified: c.verified(), Name: name, Picture: c.Picture}, nil
}
