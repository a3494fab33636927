package admin

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/locale"
	"github.com/taskweave/taskweave/domain/queue"
)

// The ops page is a read-only view of the queues for support staff, rendered on the
// server from templates embedded in the binary: no front-end build, no external assets,
// no script at all, so its Content-Security-Policy can forbid everything but its one
// inline style sheet.
//
//go:embed ops/*.html ops/ops.css
var opsFiles embed.FS

// opsCookie holds the access JWT of an ops session, for the ops page and River UI
// (/admin/river/). Its Path (opsCookiePath) keeps it off every other route, /api/v1
// included, so it never authenticates an API call.
const opsCookie = "tw_ops"

// opsCookiePath is the ops session cookie's Path: /admin/ops/ and /admin/river/ both.
const opsCookiePath = "/admin"

var (
	opsCSS = func() string {
		b, err := opsFiles.ReadFile("ops/ops.css")
		if err != nil {
			panic(err)
		}
		return string(b)
	}()
	// The style element's hash, so the CSP allows that one inline sheet and nothing else.
	opsCSP = func() string {
		sum := sha256.Sum256([]byte(opsCSS))
		return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
			"img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	}()
	opsTemplates = func() map[string]*template.Template {
		base := template.Must(template.ParseFS(opsFiles, "ops/layout.html"))
		out := map[string]*template.Template{}
		for _, name := range []string{"login", "error", "index", "job"} {
			out[name] = template.Must(template.Must(base.Clone()).ParseFS(opsFiles, "ops/"+name+".html"))
		}
		return out
	}()
)

// opsData is what every ops template reads; each page fills its part.
type opsData struct {
	Title   string
	CSS     template.CSS
	User    string
	Message string
	// login
	Email string
	// index
	Queues     []opsQueue
	States     []opsLink
	Filtered   bool
	FilterText string
	Total      int
	// TotalExact is false when Total is the bound the count stopped at (store.CountAhead).
	TotalExact bool
	Jobs       []opsJobRow
	Prev, Next string
	// job
	Job *opsJobView
}

type opsLink struct {
	Label, Href string
	On          bool
}

type opsQueue struct {
	queue.QueueStats
	Link      string
	OldestAge string
}

type opsJobRow struct {
	ID                                   int64
	Href, KindHref, QueueHref, StateHref string
	Kind, Queue, State, CreatedAt        string
	Attempt, MaxAttempts                 int
	LastError                            string
}

type opsJobView struct {
	ID                             int64
	Kind, Queue, State             string
	Attempt, MaxAttempts, Priority int
	CreatedAt, ScheduledAt         string
	AttemptedAt, FinalizedAt       string
	AttemptedBy, Tags              []string
	Args, Metadata                 string
	Errors                         []jobErrorResponse
}

// opsHeaders sets the security headers of every ops response, errors included.
func (s *handlers) opsHeaders(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentSecurityPolicy, opsCSP)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	// same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on the
	// form posts, and opsSameOrigin could not tell them from a cross-site post.
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Next()
}

// opsPage turns a handler's error into an HTML page with the status, message and
// headers the JSON API would give, so a browser never sees a JSON problem body.
func (s *handlers) opsPage(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		err := h(c)
		if err == nil {
			return nil
		}
		e := s.Errors.ToAPI(err)
		if e.Status >= 500 {
			s.Log.ErrorContext(c.UserContext(), "ops page failed", "method", c.Method(), "path", c.Path(), "status", e.Status, "err", err)
		}
		if e.RetryAfter > 0 {
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(e.RetryAfter))
		}
		return s.opsRender(c, e.Status, "error", opsData{Title: http.StatusText(e.Status),
			Message: locale.T(core.Language(c), e.Key, e.Args...)})
	}
}

func (s *handlers) opsRender(c *fiber.Ctx, status int, name string, d opsData) error {
	d.CSS = template.CSS(opsCSS)
	var buf bytes.Buffer
	if err := opsTemplates[name].ExecuteTemplate(&buf, "layout", d); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(status).Send(buf.Bytes())
}

// opsSession is the caller of an ops page: nil without a valid session cookie.
func (s *handlers) opsSession(c *fiber.Ctx) (*auth.Principal, error) {
	tok := c.Cookies(opsCookie)
	if tok == "" {
		return nil, nil
	}
	p, err := s.Authn.AccessToken(c.UserContext(), tok, 0)
	if core.IsUnauthenticated(err) {
		return nil, nil
	}
	return p, err
}

// opsAdmin renders the login form (no session) or the 403 page (not a system ADMIN) and
// returns nil; the caller goes on only with a principal.
func (s *handlers) opsAdmin(c *fiber.Ctx) (*auth.Principal, error) {
	p, err := s.opsSession(c)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, s.opsRender(c, fiber.StatusOK, "login", opsData{Title: "Sign in"})
	}
	if !p.IsAdmin() {
		return nil, s.opsRender(c, fiber.StatusForbidden, "error", opsData{Title: "Forbidden", User: p.Email,
			Message: "Only system administrators may see job operations."})
	}
	return p, nil
}

// opsSameOrigin refuses cross-site form posts: the SameSite cookie already protects
// logout, and this keeps another site from logging a browser in (login CSRF). Browsers
// say where a request comes from in Sec-Fetch-Site (a header pages cannot set); older
// ones only in Origin. A request with neither is no browser's cross-site post.
func (s *handlers) opsSameOrigin(c *fiber.Ctx) bool {
	if site := c.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" {
		return true
	}
	return origin == c.BaseURL() || origin == strings.TrimRight(s.Cfg.BaseURL, "/")
}

func (s *handlers) opsLogin(c *fiber.Ctx) error {
	if !s.opsSameOrigin(c) {
		return s.opsRender(c, fiber.StatusForbidden, "error", opsData{Title: "Forbidden", Message: "Cross-site form posts are refused."})
	}
	// The same bucket as POST /auth/login: one limit per address, whichever form is used.
	if err := core.Limit(c, s.Limiter, "auth", "auth:"+c.IP()); err != nil {
		return err
	}
	email, password := strings.TrimSpace(c.FormValue("email")), c.FormValue("password")
	if email == "" || password == "" {
		return s.opsRender(c, fiber.StatusBadRequest, "login", opsData{Title: "Sign in", Email: email,
			Message: "Enter your email and password."})
	}
	u, pair, err := s.Auth.Login(c.UserContext(), email, password, core.Meta(c))
	if errors.Is(err, auth.ErrInvalidCredentials) {
		return s.opsRender(c, fiber.StatusForbidden, "login", opsData{Title: "Sign in", Email: email,
			Message: locale.T(core.Language(c), "reason.INVALID_CREDENTIALS")})
	}
	if err != nil {
		return err
	}
	// The refresh token of the pair is never handed out: the session lasts as long as
	// the access token, and then the form asks again.
	if u.SystemRole != auth.RoleAdmin {
		return s.opsRender(c, fiber.StatusForbidden, "error", opsData{Title: "Forbidden",
			Message: "Only system administrators may see job operations."})
	}
	c.Cookie(&fiber.Cookie{
		Name: opsCookie, Value: pair.AccessToken, Path: opsCookiePath,
		MaxAge: int(pair.ExpiresIn.Seconds()), Expires: time.Now().Add(pair.ExpiresIn),
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: strings.HasPrefix(s.Cfg.BaseURL, "https://"),
	})
	return c.Redirect("/admin/ops/", fiber.StatusSeeOther)
}

func (s *handlers) opsLogout(c *fiber.Ctx) error {
	if !s.opsSameOrigin(c) {
		return s.opsRender(c, fiber.StatusForbidden, "error", opsData{Title: "Forbidden", Message: "Cross-site form posts are refused."})
	}
	c.Cookie(&fiber.Cookie{
		Name: opsCookie, Value: "", Path: opsCookiePath, MaxAge: -1, Expires: time.Unix(0, 0),
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: strings.HasPrefix(s.Cfg.BaseURL, "https://"),
	})
	return c.Redirect("/admin/ops/", fiber.StatusSeeOther)
}

// opsFilterKeys are the query parameters the overview carries from link to link.
var opsFilterKeys = []string{"state", "kind", "queue", "projectId", "issueId", "projectKey", "issueKey"}

func (s *handlers) opsIndex(c *fiber.Ctx) error {
	p, err := s.opsAdmin(c)
	if p == nil {
		return err
	}
	pr, err := parseJobPage(c)
	if err != nil {
		return err
	}
	f, err := parseJobFilter(func(k string) string { return c.Query(k) })
	if err != nil {
		return err
	}
	ops := s.jobOps()
	qs, err := ops.Queues(c.UserContext())
	if err != nil {
		return err
	}
	js, total, exact, err := ops.List(c.UserContext(), f, nil, pr.Offset(), pr.Size)
	if err != nil {
		return err
	}

	current := url.Values{}
	var described []string
	for _, k := range opsFilterKeys {
		if v := c.Query(k); v != "" {
			current.Set(k, v)
			described = append(described, k+" = "+v)
		}
	}
	// with is the overview link with one filter set (or cleared) and the others kept.
	with := func(key, value string) string {
		v := url.Values{}
		for k, vs := range current {
			v[k] = vs
		}
		if value == "" {
			v.Del(key)
		} else {
			v.Set(key, value)
		}
		if len(v) == 0 {
			return "/admin/ops/"
		}
		return "/admin/ops/?" + v.Encode()
	}

	d := opsData{Title: "Queues and jobs", User: p.Email, Total: total, TotalExact: exact, Filtered: len(described) > 0,
		FilterText: strings.Join(described, ", ")}
	for _, q := range qs {
		d.Queues = append(d.Queues, opsQueue{QueueStats: q, Link: with("queue", q.Name), OldestAge: opsAge(q.OldestAvailableAgeSeconds)})
	}
	d.States = append(d.States, opsLink{Label: "all", Href: with("state", ""), On: f.State == ""})
	for _, st := range queue.States {
		d.States = append(d.States, opsLink{Label: st, Href: with("state", st), On: f.State == st})
	}
	for i := range js {
		j := &js[i]
		row := opsJobRow{ID: j.ID, Href: "/admin/ops/jobs/" + strconv.FormatInt(j.ID, 10),
			KindHref: with("kind", j.Kind), QueueHref: with("queue", j.Queue), StateHref: with("state", j.State),
			Kind: j.Kind, Queue: j.Queue, State: j.State, CreatedAt: core.Instant(j.CreatedAt),
			Attempt: j.Attempt, MaxAttempts: j.MaxAttempts}
		if j.LastError != nil {
			row.LastError = j.LastError.Error
		}
		d.Jobs = append(d.Jobs, row)
	}
	pageLink := func(n int) string {
		v := url.Values{}
		for k, vs := range current {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(n))
		if c.Query("size") != "" {
			v.Set("size", strconv.Itoa(pr.Size))
		}
		return "/admin/ops/?" + v.Encode()
	}
	if pr.Page > 0 {
		d.Prev = pageLink(pr.Page - 1)
	}
	if (pr.Page+1)*pr.Size < total {
		d.Next = pageLink(pr.Page + 1)
	}
	return s.opsRender(c, fiber.StatusOK, "index", d)
}

func (s *handlers) opsJob(c *fiber.Ctx) error {
	p, err := s.opsAdmin(c)
	if p == nil {
		return err
	}
	id, err := parseJobID(c)
	if err != nil {
		return err
	}
	j, err := s.jobOps().Get(c.UserContext(), id)
	if err != nil {
		return err
	}
	r := toJobResponse(j)
	v := &opsJobView{ID: j.ID, Kind: j.Kind, Queue: j.Queue, State: j.State, Attempt: j.Attempt,
		MaxAttempts: j.MaxAttempts, Priority: j.Priority, CreatedAt: r.CreatedAt, ScheduledAt: r.ScheduledAt,
		AttemptedAt: opsOptional(r.AttemptedAt), FinalizedAt: opsOptional(r.FinalizedAt),
		AttemptedBy: j.AttemptedBy, Tags: j.Tags, Args: opsIndent(r.Args), Metadata: opsIndent(r.Metadata),
		Errors: r.Errors}
	return s.opsRender(c, fiber.StatusOK, "job", opsData{Title: "Job " + strconv.FormatInt(j.ID, 10), User: p.Email, Job: v})
}

// opsAge renders a wait in seconds as a short duration ("-" when nothing waits).
func opsAge(seconds float64) string {
	if seconds <= 0 {
		return "-"
	}
	return (time.Duration(seconds * float64(time.Second))).Round(time.Second).String()
}

func opsOptional(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// opsIndent pretty-prints a JSON object for the page; the template escapes it.
func opsIndent(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}
