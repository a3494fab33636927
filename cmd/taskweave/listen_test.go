package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/require"
)

// TestBaseURLDefaultsToTheHTTPAddr: without TW_BASE_URL, the public address is the one
// the API listens on, with localhost for a wildcard host; a worker's port is not the
// API's, so it keeps :8080; a TW_BASE_URL that is set always wins.
func TestBaseURLDefaultsToTheHTTPAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd, addr, baseURL    string
		wantAddr, wantBaseURL string
	}{
		{"all", "", "", ":8080", "http://localhost:8080"},
		{"api", "", "", ":8080", "http://localhost:8080"},
		{"all", "127.0.0.1:8095", "", "127.0.0.1:8095", "http://127.0.0.1:8095"},
		{"api", ":9000", "", ":9000", "http://localhost:9000"},
		{"api", "0.0.0.0:9000", "", "0.0.0.0:9000", "http://localhost:9000"},
		{"api", "[::]:9000", "", "[::]:9000", "http://localhost:9000"},
		{"api", "[::1]:9000", "", "[::1]:9000", "http://[::1]:9000"},
		{"api", "tasks.internal:9000", "", "tasks.internal:9000", "http://tasks.internal:9000"},
		{"worker", "", "", ":8081", "http://localhost:8080"},
		{"worker", "127.0.0.1:9001", "", "127.0.0.1:9001", "http://localhost:8080"},
		{"all", "127.0.0.1:8095", "https://tasks.example.com", "127.0.0.1:8095", "https://tasks.example.com"},
		{"worker", "", "https://tasks.example.com", ":8081", "https://tasks.example.com"},
	} {
		env := map[string]string{"TW_JWT_SECRET": strings.Repeat("s", 32)}
		if tc.addr != "" {
			env["TW_HTTP_ADDR"] = tc.addr
		}
		if tc.baseURL != "" {
			env["TW_BASE_URL"] = tc.baseURL
		}
		cfg, err := loadConfig(context.Background(), envconfig.MapLookuper(env))
		require.NoError(t, err)
		cfg.forCommand(tc.cmd)
		require.Equal(t, tc.wantAddr, cfg.HTTPAddr, "%+v", tc)
		require.Equal(t, tc.wantBaseURL, cfg.BaseURL, "%+v", tc)
	}
}

// TestSSOCallbackFollowsTheHTTPAddr is the case that was wrong: `api` on
// 127.0.0.1:<port> without TW_BASE_URL sends the browser back to that port, both the
// provider's redirect URI and the end of a failed flow.
func TestSSOCallbackFollowsTheHTTPAddr(t *testing.T) {
	t.Parallel()
	addr, stop := serve(t, "api", cloneDatabase(t), map[string]string{
		"TW_OAUTH_GITHUB_CLIENT_ID": "client", "TW_OAUTH_GITHUB_CLIENT_SECRET": "secret"})
	defer stop()

	noFollow := http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	location := func(path string) string {
		resp, err := noFollow.Get("http://" + addr + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusFound, resp.StatusCode, path)
		return resp.Header.Get("Location")
	}
	base := "http://" + addr
	require.True(t, strings.HasPrefix(location("/oauth2/authorization/nobody"), base+"/auth/sso/callback?error="),
		"a failed flow ends at this port")
	authorize, err := url.Parse(location("/oauth2/authorization/github"))
	require.NoError(t, err)
	require.Equal(t, base+"/login/oauth2/code/github", authorize.Query().Get("redirect_uri"))
}

// TestListenLogsOnceBound: "… listening" is written only after the bind succeeded, with
// the address bound (a port of 0 logs the real one), and the port accepts connections
// by then; a port another process holds is an error naming the address, and no line.
func TestListenLogsOnceBound(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	a := &app{log: slog.New(slog.NewJSONHandler(&logs, nil))}

	ln, err := a.listen("api", "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	var line struct{ Msg, Addr string }
	require.NoError(t, json.Unmarshal(logs.Bytes(), &line))
	require.Equal(t, "api listening", line.Msg)
	require.Equal(t, ln.Addr().String(), line.Addr)
	require.NotEqual(t, "127.0.0.1:0", line.Addr)
	conn, err := net.Dial("tcp", line.Addr)
	require.NoError(t, err, "the logged address accepts connections")
	conn.Close()

	logs.Reset()
	_, err = a.listen("api", "tcp", line.Addr)
	require.ErrorContains(t, err, "api: listen on "+line.Addr)
	require.Empty(t, logs.String(), "no listening line for a port not bound")
}

// TestAPIOnATakenPortFails: `api` on a port another process holds ends with the bind
// error instead of announcing the port.
func TestAPIOnATakenPortFails(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	env := envconfig.MapLookuper(map[string]string{"TW_DATABASE_URL": "postgres://postgres@127.0.0.1:1/none?sslmode=disable",
		"TW_JWT_SECRET": strings.Repeat("taken-port-test-", 3), "TW_LOG_LEVEL": "error", "TW_ATTACHMENTS_DIR": t.TempDir(),
		"TW_HTTP_ADDR": taken.Addr().String()})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = run(ctx, []string{"api"}, env)
	require.ErrorContains(t, err, "api: listen on "+taken.Addr().String())
}
