package api_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
