package account

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/sso"
)

// ssoConfigResponse is SSOConfig in api/openapi/92-sso.yaml: never the client secret,
// only whether one is stored.
type ssoConfigResponse struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	IssuerURL     string `json:"issuerUrl"`
	ClientID      string `json:"clientId"`
	Enabled       bool   `json:"enabled"`
	AutoProvision bool   `json:"autoProvision"`
	// AllowedDomains is additive: the e-mail domains whose accounts a first login may
	// link automatically.
	AllowedDomains []string `json:"allowedDomains"`
	HasSecret      bool     `json:"hasSecret"`
	CreatedAt      string   `json:"createdAt"`
	UpdatedAt      string   `json:"updatedAt"`
}

func toSSOConfigResponse(c sso.Config) ssoConfigResponse {
	return ssoConfigResponse{ID: c.ID.String(), Name: c.Name, IssuerURL: c.IssuerURL, ClientID: c.ClientID,
		Enabled: c.Enabled, AutoProvision: c.AutoProvision, AllowedDomains: c.AllowedDomains, HasSecret: c.HasSecret,
		CreatedAt: core.Instant(c.CreatedAt), UpdatedAt: core.Instant(c.UpdatedAt)}
}

// ssoPublicProvider is one login button: {id, name}.
type ssoPublicProvider struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ssoConfigRequest is the create and update body; on update every member is optional.
type ssoConfigRequest struct {
	Name           *string  `json:"name"`
	IssuerURL      *string  `json:"issuerUrl"`
	ClientID       *string  `json:"clientId"`
	ClientSecret   *string  `json:"clientSecret"`
	Enabled        *bool    `json:"enabled"`
	AutoProvision  *bool    `json:"autoProvision"`
	AllowedDomains []string `json:"allowedDomains"`
}

// parseSSOConfig decodes a create (create = true) or update body. On create name,
// issuerUrl, clientId and clientSecret are required (absent: BAD_REQUEST); a blank or
// too long member, an issuer that is not an absolute http(s) URL and allowedDomains
// with more than sso.MaxAllowedDomains entries or an entry that is no domain name are
// VALIDATION_ERRORs. Whether the issuer's address may be called is the domain's check
// (SSO_ISSUER_REJECTED).
func parseSSOConfig(body core.Body, create bool) (sso.ConfigChange, error) {
	var r ssoConfigRequest
	if err := body.Decode(&r); err != nil {
		return sso.ConfigChange{}, err
	}
	if create {
		switch {
		case r.Name == nil:
			return sso.ConfigChange{}, core.Required("name")
		case r.IssuerURL == nil:
			return sso.ConfigChange{}, core.Required("issuerUrl")
		case r.ClientID == nil:
			return sso.ConfigChange{}, core.Required("clientId")
		case r.ClientSecret == nil:
			return sso.ConfigChange{}, core.Required("clientSecret")
		}
	}
	var f core.Fields
	if r.Name != nil {
		f.Text("name", *r.Name, true, sso.MaxNameLength)
	}
	if r.IssuerURL != nil {
		u := strings.TrimSpace(*r.IssuerURL)
		before := len(f)
		f.Text("issuerUrl", u, true, sso.MaxIssuerLength)
		if len(f) == before && !sso.ValidIssuer(u) {
			f.Add("issuerUrl", "URL", "field.ISSUER_URL")
		}
		r.IssuerURL = &u
	}
	if r.ClientID != nil {
		f.Text("clientId", *r.ClientID, true, sso.MaxClientIDLength)
	}
	if r.ClientSecret != nil {
		f.Text("clientSecret", *r.ClientSecret, true, sso.MaxSecretLength)
	}
	domains := parseAllowedDomains(&f, r.AllowedDomains)
	if err := f.Err(); err != nil {
		return sso.ConfigChange{}, err
	}
	return sso.ConfigChange{Name: r.Name, IssuerURL: r.IssuerURL, ClientID: r.ClientID, ClientSecret: r.ClientSecret,
		Enabled: r.Enabled, AutoProvision: r.AutoProvision, AllowedDomains: domains}, nil
}

// parseAllowedDomains normalizes allowedDomains (lower case, duplicates dropped); nil
// stays nil (absent: unchanged on update, none on create).
func parseAllowedDomains(f *core.Fields, in []string) []string {
	if in == nil {
		return nil
	}
	if len(in) > sso.MaxAllowedDomains {
		f.Add("allowedDomains", "SIZE", "field.ALLOWED_DOMAINS_COUNT", "max", strconv.Itoa(sso.MaxAllowedDomains))
		return nil
	}
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, d := range in {
		n, ok := sso.NormalizeDomain(d)
		if !ok {
			f.Add("allowedDomains", "DOMAIN", "field.EMAIL_DOMAIN")
			return nil
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func (s *handlers) publicSSOProviders(c *fiber.Ctx) error {
	list, err := s.SSO.PublicProviders(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]ssoPublicProvider, 0, len(list))
	for _, p := range list {
		out = append(out, ssoPublicProvider{ID: p.ID, Name: p.Name})
	}
	return c.JSON(out)
}

func (s *handlers) listSSOConfigs(c *fiber.Ctx) error {
	list, err := s.SSO.Configs(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]ssoConfigResponse, 0, len(list))
	for _, cfg := range list {
		out = append(out, toSSOConfigResponse(cfg))
	}
	return c.JSON(out)
}

func (s *handlers) getSSOConfig(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	cfg, err := s.SSO.ConfigByID(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(toSSOConfigResponse(cfg))
}

func (s *handlers) createSSOConfig(c *fiber.Ctx) error {
	in, err := parseSSOConfig(core.BodyOf(c), true)
	if err != nil {
		return err
	}
	enabled, provision := true, true
	if in.Enabled != nil {
		enabled = *in.Enabled
	}
	if in.AutoProvision != nil {
		provision = *in.AutoProvision
	}
	cfg, err := s.SSO.CreateConfig(c.UserContext(), sso.NewConfig{Name: *in.Name, IssuerURL: *in.IssuerURL,
		ClientID: *in.ClientID, ClientSecret: *in.ClientSecret, Enabled: enabled, AutoProvision: provision,
		AllowedDomains: in.AllowedDomains})
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toSSOConfigResponse(cfg))
}

func (s *handlers) updateSSOConfig(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	in, err := parseSSOConfig(core.BodyOf(c), false)
	if err != nil {
		return err
	}
	cfg, err := s.SSO.UpdateConfig(c.UserContext(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(toSSOConfigResponse(cfg))
}

func (s *handlers) deleteSSOConfig(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	if err := s.SSO.DeleteConfig(c.UserContext(), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// ssoLinkResponse is SSOLink: a provider the signed-in account is linked to.
type ssoLinkResponse struct {
	RegistrationID string `json:"registrationId"`
	Name           string `json:"name"`
	LinkedAt       string `json:"linkedAt"`
}

// ssoLinkStartResponse is SSOLinkStart: where the browser goes next.
type ssoLinkStartResponse struct {
	AuthorizationURL string `json:"authorizationUrl"`
}

// listSSOLinks is GET /api/v1/me/sso.
func (s *handlers) listSSOLinks(c *fiber.Ctx) error {
	links, err := s.SSO.Links(c.UserContext(), core.Principal(c).UserID)
	if err != nil {
		return err
	}
	out := make([]ssoLinkResponse, 0, len(links))
	for _, l := range links {
		out = append(out, ssoLinkResponse{RegistrationID: l.Registration, Name: l.Name, LinkedAt: core.Instant(l.LinkedAt)})
	}
	return c.JSON(out)
}

// ssoLinkRequest is the optional body of a link start.
type ssoLinkRequest struct {
	CurrentPassword *string `json:"currentPassword"`
}

// linkSSO is POST /api/v1/me/sso/{registrationId}/link: it begins a link flow for the
// signed-in user (an account with a password confirms it), binds it to this browser
// with the state cookie (as a login start does) and answers the provider's
// authorization URL for the browser to open. The callback then links instead of
// signing in and ends at the web client with linked=<registrationId>.
func (s *handlers) linkSSO(c *fiber.Ctx) error {
	var r ssoLinkRequest
	if len(c.Body()) > 0 {
		if err := core.Decode(c, &r); err != nil {
			return err
		}
	}
	var current string
	if r.CurrentPassword != nil {
		current = *r.CurrentPassword
	}
	start, err := s.SSO.BeginLink(c.UserContext(), *core.Principal(c), c.Params("registrationId"), current)
	if err != nil {
		return err
	}
	s.setSSOStateCookie(c, start)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(ssoLinkStartResponse{AuthorizationURL: start.RedirectURL})
}

// unlinkSSO is DELETE /api/v1/me/sso/{registrationId}.
func (s *handlers) unlinkSSO(c *fiber.Ctx) error {
	if err := s.SSO.Unlink(c.UserContext(), *core.Principal(c), c.Params("registrationId"), core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
