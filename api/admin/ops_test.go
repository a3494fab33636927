package admin_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
)

// opsForm is the form-encoded body of the ops login.
func opsForm(email, password string) string {
	return url.Values{"email": {email}, "password": {password}}.Encode()
}

// opsLogin posts the login form and returns the reply.
func opsLogin(h *apitest.Harness, email, password string, headers ...string) *apitest.Response {
	return h.Do("POST", "/admin/ops/login", opsForm(email, password), "",
		append([]string{"Content-Type", "application/x-www-form-urlencoded"}, headers...)...)
}

// opsSessionCookie logs admin in and returns the Cookie header value of the session.
func opsSessionCookie(t *testing.T, h *apitest.Harness, email string) string {
	t.Helper()
	r := opsLogin(h, email, apitest.Password)
	require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
	require.Equal(t, "/admin/ops/", r.Header.Get("Location"))
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "tw_ops" {
			return "tw_ops=" + c.Value
		}
	}
	t.Fatalf("no tw_ops cookie in %v", r.Header.Values("Set-Cookie"))
	return ""
}

// opsCookiePath is the Path of the tw_ops cookie a reply sets.
func opsCookiePath(t *testing.T, r *apitest.Response) string {
	t.Helper()
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "tw_ops" {
			return c.Path
		}
	}
	t.Fatalf("no tw_ops cookie in %v", r.Header.Values("Set-Cookie"))
	return ""
}

// opsRequireHTML checks the status, the content type and the security headers every
// ops reply carries.
func opsRequireHTML(t *testing.T, r *apitest.Response, status int) string {
	t.Helper()
	require.Equal(t, status, r.Status, "%s", r.Body)
	require.Equal(t, "text/html; charset=utf-8", r.Header.Get("Content-Type"))
	csp := r.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "default-src 'none'")
	require.Contains(t, csp, "style-src 'sha256-")
	require.Contains(t, csp, "frame-ancestors 'none'")
	require.NotContains(t, csp, "script-src")
	require.NotContains(t, csp, "unsafe-inline")
	require.Equal(t, "DENY", r.Header.Get("X-Frame-Options"))
	require.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"))
	require.Equal(t, "no-store", r.Header.Get("Cache-Control"))
	require.Equal(t, "same-origin", r.Header.Get("Referrer-Policy"))
	body := string(r.Body)
	require.NotContains(t, strings.ToLower(body), "<script", "the page never carries script")
	return body
}

func TestOpsLoginAndSession(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h := e.h

	// Without a session: the login form.
	body := opsRequireHTML(t, h.Do("GET", "/admin/ops/", nil, ""), http.StatusOK)
	require.Contains(t, body, `<form class="login" method="post" action="/admin/ops/login">`)
	require.Contains(t, body, `name="password" type="password"`)
	require.NotContains(t, body, `id="queues"`)
	body = opsRequireHTML(t, h.Do("GET", "/admin/ops/jobs/1", nil, ""), http.StatusOK)
	require.Contains(t, body, `action="/admin/ops/login"`)
	// A garbage or API bearer credential is no session.
	body = opsRequireHTML(t, h.Do("GET", "/admin/ops/", nil, "", "Cookie", "tw_ops=not-a-jwt"), http.StatusOK)
	require.Contains(t, body, `action="/admin/ops/login"`)
	body = opsRequireHTML(t, h.Do("GET", "/admin/ops/", nil, e.admin.Access), http.StatusOK)
	require.Contains(t, body, `action="/admin/ops/login"`)

	// Wrong password: refused, the form again, no cookie.
	r := opsLogin(h, e.admin.Email, "wrong password!")
	body = opsRequireHTML(t, r, http.StatusForbidden)
	require.Contains(t, body, "Invalid email or password")
	require.Contains(t, body, `value="`+e.admin.Email+`"`)
	require.Empty(t, r.Header.Values("Set-Cookie"))
	r = opsLogin(h, "nobody@example.com", apitest.Password)
	opsRequireHTML(t, r, http.StatusForbidden)
	require.Empty(t, r.Header.Values("Set-Cookie"))
	r = opsLogin(h, "", "")
	opsRequireHTML(t, r, http.StatusBadRequest)
	require.Empty(t, r.Header.Values("Set-Cookie"))

	// A member with the right password is not let in.
	r = opsLogin(h, e.member.Email, apitest.Password)
	body = opsRequireHTML(t, r, http.StatusForbidden)
	require.Contains(t, body, "Only system administrators")
	require.Empty(t, r.Header.Values("Set-Cookie"))
	// Nor with a session cookie made of its own access token.
	body = opsRequireHTML(t, h.Do("GET", "/admin/ops/", nil, "", "Cookie", "tw_ops="+e.member.Access), http.StatusForbidden)
	require.Contains(t, body, "Only system administrators")
	require.NotContains(t, body, `id="queues"`)
	opsRequireHTML(t, h.Do("GET", "/admin/ops/jobs/1", nil, "", "Cookie", "tw_ops="+e.member.Access), http.StatusForbidden)

	// A cross-site post is refused before the password is checked.
	for _, hdr := range [][]string{{"Origin", "https://evil.example"}, {"Origin", "null"},
		{"Sec-Fetch-Site", "cross-site"}, {"Sec-Fetch-Site", "same-site"},
		{"Sec-Fetch-Site", "cross-site", "Origin", "http://localhost:8080"}} {
		r = opsLogin(h, e.admin.Email, apitest.Password, hdr...)
		opsRequireHTML(t, r, http.StatusForbidden)
		require.Empty(t, r.Header.Values("Set-Cookie"), "%v", hdr)
	}
	r = opsLogin(h, e.admin.Email, apitest.Password, "Sec-Fetch-Site", "same-origin", "Origin", "http://127.0.0.1:4321")
	require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)

	// The admin gets the cookie: HttpOnly, SameSite=Strict, only under /admin (the ops
	// page and River UI), not Secure on an http base URL.
	r = opsLogin(h, e.admin.Email, apitest.Password, "Origin", "http://localhost:8080")
	require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
	setCookie := r.Header.Get("Set-Cookie")
	require.True(t, strings.HasPrefix(setCookie, "tw_ops="), setCookie)
	lower := strings.ToLower(setCookie)
	require.Contains(t, lower, "httponly")
	require.Contains(t, lower, "samesite=strict")
	require.Equal(t, "/admin", opsCookiePath(t, r))
	require.NotContains(t, lower, "secure")
	require.Contains(t, lower, "max-age=900")

	cookie := opsSessionCookie(t, h, e.admin.Email)
	body = opsRequireHTML(t, h.Do("GET", "/admin/ops/", nil, "", "Cookie", cookie), http.StatusOK)
	require.Contains(t, body, `id="queues"`)
	require.Contains(t, body, e.admin.Email)
	// The cookie authenticates nothing outside the ops page.
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/admin/jobs", nil, "", "Cookie", cookie), http.StatusUnauthorized, "UNAUTHORIZED", apitest.NoReason)

	// Logout clears the cookie.
	r = h.Do("POST", "/admin/ops/logout", nil, "", "Cookie", cookie)
	require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
	require.Equal(t, "/admin/ops/", r.Header.Get("Location"))
	cleared := strings.ToLower(r.Header.Get("Set-Cookie"))
	require.True(t, strings.HasPrefix(cleared, "tw_ops=;"), cleared)
	require.Equal(t, "/admin", opsCookiePath(t, r))
	require.Contains(t, cleared, "expires=thu, 01 jan 1970")
	opsRequireHTML(t, h.Do("POST", "/admin/ops/logout", nil, "", "Origin", "https://evil.example"), http.StatusForbidden)
}

func TestOpsSecureCookieOnHTTPS(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Configure: func(s *api.Settings) { s.BaseURL = "https://ops.example.com" }})
	admin := h.Register("Ada")
	h.MakeAdmin(admin)
	r := opsLogin(h, admin.Email, apitest.Password, "Origin", "https://ops.example.com")
	require.Equal(t, http.StatusSeeOther, r.Status, "%s", r.Body)
	require.Contains(t, strings.ToLower(r.Header.Get("Set-Cookie")), "secure")
}

func TestOpsLoginIsRateLimited(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Configure: func(s *api.Settings) { s.AuthRateLimit = 2; s.AuthRateWindow = time.Hour }})
	for range 2 {
		opsRequireHTML(t, opsLogin(h, "who@example.com", "wrong password"), http.StatusForbidden)
	}
	r := opsLogin(h, "who@example.com", "wrong password")
	opsRequireHTML(t, r, http.StatusTooManyRequests)
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	// The same bucket as the JSON login.
	r = h.Do("POST", "/api/v1/auth/login", map[string]any{"email": "who@example.com", "password": "x"}, "")
	require.Equal(t, http.StatusTooManyRequests, r.Status)
}

func TestOpsOverviewAndJobPage(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h := e.h
	evil := `<script>alert("pwned")</script> & co`
	failed := jobInsert(t, h, jobSpec{kind: "webhook.deliver", queue: "webhooks", state: "discarded", attempt: 2, max: 2,
		args: map[string]any{"projectId": e.p1.String(), "note": "</pre><script>x()</script>"},
		errors: []map[string]any{jobAttemptError(1, "HTTP 500 from receiver"),
			{"at": time.Now().UTC().Format(time.RFC3339Nano), "attempt": 2, "error": evil, "trace": "trace <b>bold</b>"}}})
	ok := jobInsert(t, h, jobSpec{kind: "audit.record", queue: "audit", state: "available", scheduledAgo: 3 * time.Minute})
	cookie := opsSessionCookie(t, h, e.admin.Email)
	get := func(path string, status int) string {
		t.Helper()
		return opsRequireHTML(t, h.Do("GET", path, nil, "", "Cookie", cookie), status)
	}

	body := get("/admin/ops/", http.StatusOK)
	for _, q := range []string{"default", "audit", "webhooks", "integrations"} {
		require.Contains(t, body, `<td><a href="/admin/ops/?queue=`+q+`">`+q+`</a></td>`)
	}
	require.Contains(t, body, `<td class="num">3m0s</td>`, "the audit queue's oldest available job")
	require.Contains(t, body, fmt.Sprintf(`<a href="/admin/ops/jobs/%d">%d</a>`, failed, failed))
	require.Contains(t, body, fmt.Sprintf(`<a href="/admin/ops/jobs/%d">%d</a>`, ok, ok))
	require.Less(t, strings.Index(body, fmt.Sprintf(">%d</a>", ok)), strings.Index(body, fmt.Sprintf(">%d</a>", failed)),
		"newest first")
	// The error text is escaped, never markup.
	require.Contains(t, body, `&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt; &amp; co`)
	require.NotContains(t, body, evil)
	require.Contains(t, body, `<a href="/admin/ops/?state=discarded">discarded</a>`)
	require.Contains(t, body, `<a href="/admin/ops/?kind=webhook.deliver">webhook.deliver</a>`)

	// Filters through the query string keep each other in the links.
	body = get("/admin/ops/?state=discarded", http.StatusOK)
	require.Contains(t, body, fmt.Sprintf(">%d</a>", failed))
	require.NotContains(t, body, fmt.Sprintf(`/admin/ops/jobs/%d"`, ok))
	require.Contains(t, body, "1 job(s)")
	require.Contains(t, body, `<a href="/admin/ops/?queue=webhooks&amp;state=discarded">webhooks</a>`)
	body = get("/admin/ops/?kind=audit.record&queue=audit", http.StatusOK)
	require.Contains(t, body, fmt.Sprintf(`/admin/ops/jobs/%d"`, ok))
	require.NotContains(t, body, fmt.Sprintf(`/admin/ops/jobs/%d"`, failed))
	body = get("/admin/ops/?size=1", http.StatusOK)
	require.Contains(t, body, `<a href="/admin/ops/?page=1&amp;size=1">older →</a>`)
	body = get("/admin/ops/?state=bogus", http.StatusBadRequest)
	require.Contains(t, body, "state must be one of")
	get("/admin/ops/?projectId=nope", http.StatusBadRequest)

	// One job: every error and trace, escaped; the args pretty-printed and escaped.
	body = get(fmt.Sprintf("/admin/ops/jobs/%d", failed), http.StatusOK)
	require.Contains(t, body, "Errors (2)")
	require.Contains(t, body, "HTTP 500 from receiver")
	require.Contains(t, body, `&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt; &amp; co`)
	require.Contains(t, body, "trace &lt;b&gt;bold&lt;/b&gt;")
	require.Contains(t, body, `&#34;note&#34;: &#34;&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;&#34;`)
	require.Contains(t, body, `&#34;projectId&#34;: &#34;`+e.p1.String()+`&#34;`)
	require.NotContains(t, body, evil)
	body = get(fmt.Sprintf("/admin/ops/jobs/%d", ok), http.StatusOK)
	require.Contains(t, body, "No errors.")
	get("/admin/ops/jobs/987654321", http.StatusNotFound)
	get("/admin/ops/jobs/abc", http.StatusBadRequest)
}
