package admin

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"riverqueue.com/riverui"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/store"
)

// River UI (riverqueue.com/riverui) is River's own job console, a single-page app and
// the JSON API it calls, served at /admin/river/ for support staff. It sits behind the
// ops page's session (or an admin bearer token): nobody but a system ADMIN reaches any
// of it, assets included, so job args never leave the server for anyone else. Its
// mutating calls are answered by Taskweave (river_ui_actions.go), not by River UI, so
// each change commits with its audit entries in one transaction.

// riverUIPrefix is where River UI is mounted; its JSON API is under riverUIPrefix+"/api".
const riverUIPrefix = "/admin/river"

// riverUICSP lets River UI's pages load their own scripts, styles and icons and call
// their own API, and nothing from anywhere else. Scripts come only from its files:
// there is no inline script (its config is a JSON data block, which a browser never
// runs) and no eval (Zod probes for it once and does without). Inline style elements
// are allowed: its toast library writes its styles into one, and a style cannot run
// code.
const riverUICSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; " +
	"frame-ancestors 'none'"

// NewRiverUI builds River UI's handler over db's pgx pool with a River client of its
// own (riverpgxv5, insert-only: no queues, no workers), which reads River's tables as
// River's own tools do. The handler's background count caches are not started: every
// API replica would refresh them, and without them the sidebar counts come from a
// bounded query per request (estimates above 10,000 jobs in a state).
func NewRiverUI(db *store.DB, log *slog.Logger) (http.Handler, error) {
	cfg := &river.Config{}
	if log != nil {
		cfg.Logger = log
	} else {
		log = slog.Default()
	}
	client, err := river.NewClient(riverpgxv5.New(db.Pool), cfg)
	if err != nil {
		return nil, fmt.Errorf("river ui client: %w", err)
	}
	h, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(client, nil),
		Logger:    log,
		Prefix:    riverUIPrefix,
	})
	if err != nil {
		return nil, fmt.Errorf("river ui handler: %w", err)
	}
	return h, nil
}

// riverUIServe runs River UI's net/http handler under the request's deadline (the
// adaptor would otherwise hand it the connection's context, which has none).
func (s *handlers) riverUIServe(h http.Handler) fiber.Handler {
	timeout := s.Cfg.RequestTimeout
	return adaptor.HTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
}

// riverUIIsAPI tells River UI's JSON API from its pages and assets.
func riverUIIsAPI(path string) bool {
	return path == riverUIPrefix+"/api" || strings.HasPrefix(path, riverUIPrefix+"/api/")
}

// riverUIMutating reports whether the method may change something.
func riverUIMutating(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// riverUIGate runs before everything under /admin/river. In order: a mutating request
// from another site is refused (403) before any credential is looked at; then the
// caller is the bearer token's (when an Authorization header is sent) or the ops
// session cookie's; without one a page request is sent to the ops login form and an API
// request gets 401; a project API key, a user who is not a system ADMIN, or a read-only
// token that would change something gets 403 (an HTML page for a browser's page request).
func (s *handlers) riverUIGate(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentSecurityPolicy, riverUICSP)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	if strings.HasPrefix(c.Path(), riverUIPrefix+"/assets/") {
		// Vite's asset names carry their content hash; only admins ever fetch them.
		c.Set(fiber.HeaderCacheControl, "private, max-age=31536000, immutable")
	} else {
		c.Set(fiber.HeaderCacheControl, "no-store")
	}
	mutating := riverUIMutating(c.Method())
	bearer := c.Get(fiber.HeaderAuthorization) != ""
	page := !bearer && !riverUIIsAPI(c.Path()) && !mutating

	if mutating && !s.opsSameOrigin(c) {
		return core.Forbidden("CROSS_SITE_REQUEST")
	}
	p, err := s.riverUIPrincipal(c, bearer)
	if err != nil {
		return err
	}
	if p == nil {
		if page {
			return c.Redirect("/admin/ops/", fiber.StatusSeeOther)
		}
		return core.ErrUnauthorized
	}
	var refused *core.Error
	switch {
	case p.Method == auth.MethodAPIKey:
		refused = core.Forbidden("API_KEY_SCOPE")
	case !p.IsAdmin():
		refused = core.Forbidden("ADMIN_ONLY")
	case mutating && p.Method == auth.MethodPAT && p.Scope == auth.ScopeReadOnly:
		refused = core.Forbidden("READ_ONLY_TOKEN")
	}
	if refused != nil {
		if page {
			// The ops error page, with the ops page's headers (its CSP allows exactly
			// its inline style sheet).
			c.Set(fiber.HeaderContentSecurityPolicy, opsCSP)
			return s.opsRender(c, fiber.StatusForbidden, "error", opsData{Title: "Forbidden", User: p.Email,
				Message: "Only system administrators may see job operations."})
		}
		return refused
	}
	c.Locals(core.PrincipalKey, p)
	return c.Next()
}

// riverUIPrincipal is the caller: the bearer token's when an Authorization header is
// sent (a bad one is 401, never a fall-back to the cookie), else the ops session's, or
// nil.
func (s *handlers) riverUIPrincipal(c *fiber.Ctx, bearer bool) (*auth.Principal, error) {
	if !bearer {
		return s.opsSession(c)
	}
	h := c.Get(fiber.HeaderAuthorization)
	if len(h) <= 7 || !strings.EqualFold(h[:7], "bearer ") {
		return nil, core.ErrUnauthorized
	}
	p, err := s.Authn.Authenticate(c.UserContext(), strings.TrimSpace(h[7:]))
	if core.IsUnauthenticated(err) {
		return nil, core.ErrUnauthorized
	}
	return p, err
}
