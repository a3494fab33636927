package main_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// proxyTo accepts on ln and forwards each connection to target, until the test ends.
func proxyTo(t *testing.T, ln net.Listener, target string) {
	t.Helper()
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, c) }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
}

func status(addr, path string) int {
	res, err := http.Get("http://" + addr + path)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// TestProcessesWaitForTheDatabase: an api and a worker started before their database
// answers both wait (alive, /healthz 200, /readyz 503), and both become ready once it
// does, without a restart; with TW_DB_START_TIMEOUT they exit non-zero instead.
func TestProcessesWaitForTheDatabase(t *testing.T) {
	t.Parallel()
	dir, bin, dbURL := binaryOnClone(t)
	ctx := context.Background()

	// The database's address for the processes: nothing listens there yet.
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	target := u.Host
	dbAddr := loopbackAddr(t)
	u.Host = dbAddr
	env := map[string]string{
		"TW_DATABASE_URL":    u.String(),
		"TW_JWT_SECRET":      strings.Repeat("start-test-secret-", 3),
		"TW_ATTACHMENTS_DIR": filepath.Join(dir, "attachments"),
		"TW_LOG_LEVEL":       "info",
	}

	for _, sub := range []string{"api", "worker"} {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(cctx, bin, sub)
		cmd.Dir, cmd.Env = dir, processEnv(withSetting(withSetting(env, "TW_DB_START_TIMEOUT", "1s"), "TW_HTTP_ADDR", loopbackAddr(t)))
		start := time.Now()
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%s gives up after TW_DB_START_TIMEOUT: %s", sub, out)
		require.Contains(t, string(out), "TW_DB_START_TIMEOUT", sub)
		require.Less(t, time.Since(start), 20*time.Second, sub)
	}

	apiAddr, workerAddr := loopbackAddr(t), loopbackAddr(t)
	startProc(t, dir, "api", bin, []string{"api"}, withSetting(env, "TW_HTTP_ADDR", apiAddr))
	startProc(t, dir, "worker", bin, []string{"worker"}, withSetting(env, "TW_HTTP_ADDR", workerAddr))
	for _, addr := range []string{apiAddr, workerAddr} {
		waitUntil(t, 30*time.Second, addr+" /healthz answers while the database does not", func() bool {
			return status(addr, "/healthz") == http.StatusOK
		})
	}
	time.Sleep(2 * time.Second) // several retries: neither gives up
	for _, addr := range []string{apiAddr, workerAddr} {
		require.Equal(t, http.StatusOK, status(addr, "/healthz"), addr)
		require.Equal(t, http.StatusServiceUnavailable, status(addr, "/readyz"), addr)
	}

	ln, err := net.Listen("tcp", dbAddr)
	require.NoError(t, err)
	proxyTo(t, ln, target)
	for _, addr := range []string{apiAddr, workerAddr} {
		waitUntil(t, 30*time.Second, addr+" /readyz once the database answers", func() bool {
			return status(addr, "/readyz") == http.StatusOK
		})
	}
}
