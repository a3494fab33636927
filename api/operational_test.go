package api_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/queue"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestHealthAndMetrics(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	h.Registry.MustRegister(queue.NewCollector(h.DB.Pool, apitest.TestLogger(t)))
	require.Equal(t, http.StatusOK, h.Do("GET", "/healthz", nil, "").Status)
	ready := h.Do("GET", "/readyz", nil, "")
	require.Equal(t, http.StatusOK, ready.Status, "%s", ready.Body)
	require.Equal(t, "UP", ready.JSON(t)["status"])

	h.Register("Metered") // leaves an audit job in the queue
	r := h.Do("GET", "/metrics", nil, "")
	require.Equal(t, http.StatusOK, r.Status)
	body := string(r.Body)
	require.Contains(t, body, `taskweave_http_requests_total{method="POST",route="/api/v1/auth/register",status="201"}`)
	require.Contains(t, body, `taskweave_http_request_duration_seconds_bucket{method="GET",route="/readyz"`)
	require.Contains(t, body, `taskweave_river_jobs{kind="audit.record",queue="audit",state="available"}`)
	require.Contains(t, body, `taskweave_river_oldest_available_job_age_seconds{kind="audit.record",queue="audit"}`)
}

func TestDatabaseDownIs503WithoutDetails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, err := storetest.CloneURL(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { storetest.Drop(url) })
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	var down atomic.Bool
	dialer := &net.Dialer{Timeout: time.Second}
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if down.Load() {
			return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused")}
		}
		return dialer.DialContext(ctx, network, addr)
	}
	db, err := store.OpenConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	h := apitest.New(t, apitest.Options{DB: db})
	u := h.Register("Down")
	// The database goes away: no idle connection survives and no new one can be made.
	down.Store(true)
	db.Pool.Reset()
	db.SQL.SetMaxIdleConns(0)

	for _, r := range []*apitest.Response{
		h.Do("GET", "/api/v1/auth/me", nil, u.Access),
		h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, ""),
	} {
		require.Equal(t, http.StatusServiceUnavailable, r.Status, "%s", r.Body)
		m := r.JSON(t)
		require.Equal(t, "UNAVAILABLE", m["code"])
		low := strings.ToLower(string(r.Body))
		for _, leak := range []string{"select", "sql", "pgx", "goroutine", ".go:"} {
			require.NotContains(t, low, leak)
		}
	}
	require.Equal(t, http.StatusServiceUnavailable, h.Do("GET", "/readyz", nil, "").Status)
}
