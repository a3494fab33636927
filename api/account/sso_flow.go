package account

import (
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/sso"
)

// ssoStateCookie binds a begun login to the browser that began it. It is only sent to
// the callback path, and lives as long as the state.
const ssoStateCookie = "tw_sso_state"

const ssoCallbackPath = "/login/oauth2/code/"

// startSSO is GET /oauth2/authorization/{registrationId} (and the /login/... alias):
// a 302 to the provider, or to the web client with error=<reason>.
func (s *handlers) startSSO(c *fiber.Ctx) error {
	start, err := s.SSO.Begin(c.UserContext(), c.Params("registrationId"))
	if err != nil {
		return s.ssoFailed(c, err)
	}
	s.setSSOStateCookie(c, start)
	return s.ssoRedirect(c, start.RedirectURL)
}

// setSSOStateCookie binds a begun flow to this browser.
func (s *handlers) setSSOStateCookie(c *fiber.Ctx, start sso.Start) {
	c.Cookie(&fiber.Cookie{Name: ssoStateCookie, Value: start.Binding, Path: ssoCallbackPath, MaxAge: int(sso.StateTTL / time.Second),
		HTTPOnly: true, Secure: s.httpsBase(), SameSite: fiber.CookieSameSiteLaxMode})
}

// ssoCallback is GET /login/oauth2/code/{registrationId}, where the provider sends the
// browser back: a 302 to the web client with a one-time code (a login), with
// linked=<registrationId> (a link flow), or with error=<reason>. It never answers with
// an error page.
func (s *handlers) ssoCallback(c *fiber.Ctx) error {
	cb := sso.Callback{Code: c.Query("code"), State: c.Query("state"), Error: c.Query("error"), Binding: c.Cookies(ssoStateCookie)}
	c.Cookie(&fiber.Cookie{Name: ssoStateCookie, Value: "", Path: ssoCallbackPath, MaxAge: -1, Expires: time.Unix(0, 0),
		HTTPOnly: true, Secure: s.httpsBase(), SameSite: fiber.CookieSameSiteLaxMode})
	res, err := s.SSO.Finish(c.UserContext(), c.Params("registrationId"), cb, core.Meta(c))
	if err != nil {
		return s.ssoFailed(c, err)
	}
	return s.ssoRedirect(c, s.SSO.ResultURL(res, nil))
}

// ssoFailed ends a flow at the web client with the reason; the cause goes to the log
// (a warning for the provider's or the client's fault, an error for ours).
func (s *handlers) ssoFailed(c *fiber.Ctx, err error) error {
	reason := sso.ReasonOf(err)
	if reason == sso.ReasonServerError {
		s.Log.ErrorContext(c.UserContext(), "sso flow failed", "path", c.Path(), "err", err)
	} else {
		s.Log.WarnContext(c.UserContext(), "sso flow refused", "path", c.Path(), "reason", reason, "err", err)
	}
	return s.ssoRedirect(c, s.SSO.ResultURL(sso.Result{}, err))
}

// ssoRedirect answers 302 without caching, and without a Referer for the next page
// (the callback's own URL holds the provider's code).
func (s *handlers) ssoRedirect(c *fiber.Ctx, to string) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	return c.Redirect(to, fiber.StatusFound)
}

// httpsBase reports whether the public address is https: the state cookie is then
// Secure.
func (s *handlers) httpsBase() bool {
	u, err := url.Parse(s.Cfg.BaseURL)
	return err == nil && strings.EqualFold(u.Scheme, "https")
}

type ssoExchangeRequest struct {
	Code *string `json:"code"`
}

// exchangeSSO is POST /api/v1/auth/sso/exchange: the one-time code for the login token
// pair.
func (s *handlers) exchangeSSO(c *fiber.Ctx) error {
	var r ssoExchangeRequest
	if err := core.Decode(c, &r); err != nil {
		return err
	}
	if r.Code == nil {
		return core.Required("code")
	}
	pair, err := s.SSO.Exchange(c.UserContext(), *r.Code, core.Meta(c))
	if err != nil {
		return err
	}
	return c.JSON(toAuthResponse(pair))
}
