package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
)

// replyHeaders sends one request straight to the app and returns status and headers.
func replyHeaders(t *testing.T, h *apitest.Harness, method, target, token, body string) (int, http.Header) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.Server.App.Test(req, 30_000)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// TestEveryReplyIsNosniffAndNoStore: successes, errors of every origin (handler, router,
// authentication, the body guard, the edge before routing), probes, metrics and the
// document carry X-Content-Type-Options: nosniff and Cache-Control: no-store; an
// attachment download keeps its own caching, with nosniff.
func TestEveryReplyIsNosniffAndNoStore(t *testing.T) {
	t.Parallel()
	f := atFixtureOn(t, apitest.Shared(t))
	a := f.uploaded(t, f.Member.Access, "notes.txt", "text/plain", "hello")
	big := `{"email":"` + strings.Repeat("a", 5<<20) + `"}`
	for _, c := range []struct {
		method, target, token, body string
		status                      int
	}{
		{"GET", "/healthz", "", "", 200},
		{"GET", "/readyz", "", "", 200},
		{"GET", "/metrics", "", "", 200},
		{"GET", "/openapi.yaml", "", "", 200},
		{"GET", "/api/v1/auth/me", f.Member.Access, "", 200},
		{"GET", f.at(""), f.Member.Access, "", 200},
		{"GET", "/api/v1/auth/me", "", "", 401},
		{"POST", "/api/v1/auth/login", "", `{"email":"nobody@example.com","password":"wrong-password"}`, 403},
		{"POST", "/api/v1/auth/login", "", `{`, 400},
		{"POST", "/api/v1/auth/login", "", big, 413},
		{"GET", "/no/such/route", "", "", 404},
		{"DELETE", "/healthz", "", "", 405},
		{"FOO", "/api/v1/auth/me", "", "", 405},
	} {
		status, hd := replyHeaders(t, f.H, c.method, c.target, c.token, c.body)
		require.Equal(t, c.status, status, "%s %s", c.method, c.target)
		require.Equal(t, "nosniff", hd.Get("X-Content-Type-Options"), "%s %s", c.method, c.target)
		require.Equal(t, "no-store", hd.Get("Cache-Control"), "%s %s", c.method, c.target)
	}

	status, hd := replyHeaders(t, f.H, "GET", f.at("/"+a["id"].(string)+"/download"), f.Member.Access, "")
	require.Equal(t, 200, status)
	require.Equal(t, "nosniff", hd.Get("X-Content-Type-Options"))
	require.Equal(t, "private, no-cache", hd.Get("Cache-Control"), "the download keeps its own")
	require.Equal(t, "default-src 'none'; sandbox", hd.Get("Content-Security-Policy"))
}

// TestMetricsCanLeaveTheAPIPort: with Config.MetricsOff (TW_METRICS_ADDR set) the API
// answers /metrics like any unknown route.
func TestMetricsCanLeaveTheAPIPort(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{DB: apitest.Shared(t).DB, Configure: func(s *api.Settings) { s.MetricsOff = true }})
	status, hd := replyHeaders(t, h, "GET", "/metrics", "", "")
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "no-store", hd.Get("Cache-Control"))
	status, _ = replyHeaders(t, h, "GET", "/healthz", "", "")
	require.Equal(t, http.StatusOK, status, "the probes stay")
}
