package api_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestLoginRateLimitSharedByReplicas(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	// Two servers on one database stand for two API replicas.
	a := apitest.New(t, apitest.Options{DB: db, Configure: apitest.LimitedAuth(3, time.Minute)})
	b := apitest.New(t, apitest.Options{DB: db, Configure: apitest.LimitedAuth(3, time.Minute)})
	login := map[string]any{"email": "x@example.com", "password": "whatever1"}
	from := func(ip string) []string { return []string{"X-Forwarded-For", ip} }

	require.Equal(t, http.StatusForbidden, a.Do("POST", "/api/v1/auth/login", login, "", from("10.0.0.1")...).Status)
	require.Equal(t, http.StatusForbidden, b.Do("POST", "/api/v1/auth/login", login, "", from("10.0.0.1")...).Status)
	// Registration shares the bucket.
	reg := a.Do("POST", "/api/v1/auth/register", map[string]any{"email": "r@example.com", "displayName": "R", "password": apitest.Password}, "", from("10.0.0.1")...)
	require.Equal(t, http.StatusCreated, reg.Status)

	r := b.Do("POST", "/api/v1/auth/login", login, "", from("10.0.0.1")...)
	require.Equal(t, http.StatusTooManyRequests, r.Status)
	m := r.JSON(t)
	require.Equal(t, "RATE_LIMITED", m["code"])
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.True(t, secs >= 1 && secs <= 60, "Retry-After %d", secs)
	rr := a.Do("POST", "/api/v1/auth/register", map[string]any{"email": "r2@example.com", "displayName": "R", "password": apitest.Password}, "", from("10.0.0.1")...)
	require.Equal(t, http.StatusTooManyRequests, rr.Status)
	require.Equal(t, 0, a.Count("SELECT count(*) FROM users WHERE email = 'r2@example.com'"))

	// Another client address has its own window.
	require.Equal(t, http.StatusForbidden, a.Do("POST", "/api/v1/auth/login", login, "", from("10.0.0.2")...).Status)
	// Refresh is not limited.
	require.Equal(t, http.StatusForbidden, a.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": "x"}, "", from("10.0.0.1")...).Status)
}

func TestRateLimitWindowSlides(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Configure: apitest.LimitedAuth(2, 700*time.Millisecond)})
	login := map[string]any{"email": "x@example.com", "password": "whatever1"}
	ip := []string{"X-Forwarded-For", "10.9.9.9"}
	require.Equal(t, http.StatusForbidden, h.Do("POST", "/api/v1/auth/login", login, "", ip...).Status)
	require.Equal(t, http.StatusForbidden, h.Do("POST", "/api/v1/auth/login", login, "", ip...).Status)
	require.Equal(t, http.StatusTooManyRequests, h.Do("POST", "/api/v1/auth/login", login, "", ip...).Status)
	apitest.Eventually(t, 3*time.Second, func() bool {
		return h.Do("POST", "/api/v1/auth/login", login, "", ip...).Status == http.StatusForbidden
	}, "window slides open again")
}

// TestRateLimitHeaders: a limited route answers RateLimit-Policy and RateLimit on every
// reply, and Retry-After with them on 429.
func TestRateLimitHeaders(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Configure: apitest.LimitedAuth(3, time.Minute)})
	login := map[string]any{"email": "x@example.com", "password": "whatever1"}
	ip := []string{"X-Forwarded-For", "10.7.7.7"}
	for _, left := range []string{"2", "1", "0"} {
		r := h.Do("POST", "/api/v1/auth/login", login, "", ip...)
		require.Equal(t, http.StatusForbidden, r.Status)
		require.Equal(t, `"auth";q=3;w=60`, r.Header.Get("RateLimit-Policy"))
		require.Regexp(t, `^"auth";r=`+left+`;t=(59|60)$`, r.Header.Get("RateLimit"))
	}
	r := h.Do("POST", "/api/v1/auth/login", login, "", ip...)
	require.Equal(t, http.StatusTooManyRequests, r.Status)
	require.Equal(t, `"auth";q=3;w=60`, r.Header.Get("RateLimit-Policy"))
	require.Regexp(t, `^"auth";r=0;t=(59|60)$`, r.Header.Get("RateLimit"))
	require.Regexp(t, `^(59|60)$`, r.Header.Get("Retry-After"))
}

// TestAPIRateLimitPerCredential: with TW_API_RATE_LIMIT every protected request counts
// against its credential (a login's tokens by user, a personal access token alone); off,
// nothing is counted and no header is sent.
func TestAPIRateLimitPerCredential(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Configure: func(s *api.Settings) { s.APIRateLimit = 3 }})
	u := h.Register("Limited") // its GET /auth/me is the first request counted
	pat := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "script", "scope": "READ_WRITE"}, u.Access)
	require.Equal(t, http.StatusCreated, pat.Status, "%s", pat.Body)
	require.Equal(t, `"api";q=3;w=60`, pat.Header.Get("RateLimit-Policy"))
	require.Regexp(t, `^"api";r=1;t=\d+$`, pat.Header.Get("RateLimit"))
	token := pat.JSON(t)["plaintext"].(string)

	me := h.Do("GET", "/api/v1/auth/me", nil, u.Access)
	require.Equal(t, http.StatusOK, me.Status)
	require.Regexp(t, `^"api";r=0;t=\d+$`, me.Header.Get("RateLimit"))
	me = h.Do("GET", "/api/v1/auth/me", nil, u.Access)
	apitest.RequireProblem(t, me, http.StatusTooManyRequests, "RATE_LIMITED", apitest.ReasonOrNone(""))
	require.Regexp(t, `^"api";r=0;t=\d+$`, me.Header.Get("RateLimit"))
	secs, err := strconv.Atoi(me.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.True(t, secs >= 1 && secs <= 60, "Retry-After %d", secs)

	// The token is a credential of its own; another user has their own count.
	byToken := h.Do("GET", "/api/v1/auth/me", nil, token)
	require.Equal(t, http.StatusOK, byToken.Status)
	require.Regexp(t, `^"api";r=2;t=\d+$`, byToken.Header.Get("RateLimit"))
	// A read whose credential is checked with the project (the issue list, the board)
	// counts in the same place.
	deferred := h.Do("GET", "/api/v1/projects/NOSUCHPRJ/issues", nil, token)
	require.Equal(t, http.StatusNotFound, deferred.Status, "%s", deferred.Body)
	require.Regexp(t, `^"api";r=1;t=\d+$`, deferred.Header.Get("RateLimit"))
	v := h.Register("Other")
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/auth/me", nil, v.Access).Status)

	// Off (the default): no count, no header.
	off := apitest.Shared(t)
	w := off.Register("Unlimited")
	r := off.Do("GET", "/api/v1/auth/me", nil, w.Access)
	require.Equal(t, http.StatusOK, r.Status)
	require.Empty(t, r.Header.Get("RateLimit"))
	require.Empty(t, r.Header.Get("RateLimit-Policy"))
}
