package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store/storetest"
)

func TestMetricsAddrIsValidated(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("s", 32)
	for _, v := range []string{"", "off", ":9090", "127.0.0.1:9090", "[::1]:9090"} {
		cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(map[string]string{"TW_JWT_SECRET": secret, "TW_METRICS_ADDR": v}))
		require.NoError(t, err, v)
		require.Equal(t, v, cfg.MetricsAddr)
	}
	for _, v := range []string{"9090", "OFF ", "no", "localhost"} {
		_, err := loadConfig(context.Background(), envconfig.MapLookuper(map[string]string{"TW_JWT_SECRET": secret, "TW_METRICS_ADDR": v}))
		require.ErrorContains(t, err, "TW_METRICS_ADDR", v)
	}
}

// freeAddr is a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// get answers the status and body of GET url, 0 when nothing answers.
func get(url string) (int, string) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// cloneDatabase is a migrated database of the test's own, dropped when it ends.
func cloneDatabase(t *testing.T) string {
	t.Helper()
	dbURL, err := storetest.CloneURL(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { storetest.Drop(dbURL) })
	return dbURL
}

// serve runs the subcommand sub on dbURL, on a free loopback port, with env over a test
// configuration, until the returned stop; it waits until /healthz answers.
func serve(t *testing.T, sub, dbURL string, env map[string]string) (httpAddr string, stop func()) {
	t.Helper()
	httpAddr = freeAddr(t)
	all := map[string]string{"TW_DATABASE_URL": dbURL, "TW_JWT_SECRET": strings.Repeat("serve-test-", 3),
		"TW_LOG_LEVEL": "error", "TW_ATTACHMENTS_DIR": t.TempDir(), "TW_HTTP_ADDR": httpAddr}
	for k, v := range env {
		all[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{sub}, envconfig.MapLookuper(all)) }()
	stop = func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal(sub, " did not stop")
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if status, _ := get("http://" + httpAddr + "/healthz"); status == http.StatusOK {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("%s ended: %v", sub, err)
		default:
		}
		require.True(t, time.Now().Before(deadline), "%s did not come up", sub)
		time.Sleep(20 * time.Millisecond)
	}
	return httpAddr, stop
}

// TestMetricsAddr runs the api and worker subcommands as an operator would: by default
// /metrics is on TW_HTTP_ADDR; TW_METRICS_ADDR=off takes it away; an address moves it
// there (and only it), off the public port.
func TestMetricsAddr(t *testing.T) {
	t.Parallel()
	dbURL := cloneDatabase(t)
	metrics := func(t *testing.T, addr string) {
		t.Helper()
		status, body := get("http://" + addr + "/metrics")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, "go_goroutines")
	}

	api, stop := serve(t, "api", dbURL, nil)
	metrics(t, api)
	stop()

	api, stop = serve(t, "api", dbURL, map[string]string{"TW_METRICS_ADDR": "off"})
	status, body := get("http://" + api + "/metrics")
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, "ROUTE_NOT_FOUND")
	stop()

	own := freeAddr(t)
	api, stop = serve(t, "api", dbURL, map[string]string{"TW_METRICS_ADDR": own})
	status, _ = get("http://" + api + "/metrics")
	require.Equal(t, http.StatusNotFound, status, "not on the public port")
	metrics(t, own)
	status, _ = get("http://" + own + "/healthz")
	require.Equal(t, http.StatusNotFound, status, "the metrics listener serves /metrics only")
	get("http://" + api + "/api/v1/auth/me") // a request for the HTTP metrics to count
	_, body = get("http://" + own + "/metrics")
	require.Contains(t, body, "taskweave_http_requests_total", "the API's own metrics")
	stop()

	own = freeAddr(t)
	worker, stop := serve(t, "worker", dbURL, map[string]string{"TW_METRICS_ADDR": own})
	status, _ = get("http://" + worker + "/metrics")
	require.Equal(t, http.StatusNotFound, status)
	metrics(t, own)
	stop()
}
