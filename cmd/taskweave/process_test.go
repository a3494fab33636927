package main_test

// Helpers of the tests that run taskweave (and Prometheus) as separate processes, as an
// operator does.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store/storetest"
)

// client calls an API process and requires the status each call expects.
type client struct {
	t    *testing.T
	base string
	// calls counts the requests made, so a test can wait until its metrics saw them.
	calls int
}

func (c *client) do(method, path, token string, body any, want int) map[string]any {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(c.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	require.NoError(c.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	c.calls++
	raw, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	require.Equal(c.t, want, res.StatusCode, "%s %s: %s", method, path, raw)
	out := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 && raw[0] == '{' {
		require.NoError(c.t, json.Unmarshal(raw, &out))
	}
	return out
}

// runToEnd runs `bin sub` and requires it to exit 0 within a minute.
func runToEnd(t *testing.T, dir, name, bin, sub string, env map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, sub)
	cmd.Dir, cmd.Env = dir, processEnv(env)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// startKillable runs `bin args…` to be killed by the test: kill sends SIGKILL (no
// shutdown, its running jobs left to River's rescuer) and waits for the exit. Its output
// goes to dir/name.log; it is killed when the test ends if still running.
func startKillable(t *testing.T, dir, name, bin string, args []string, env map[string]string) (kill func()) {
	t.Helper()
	logFile, err := os.Create(filepath.Join(dir, name+".log"))
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, processEnv(env)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start(), name)
	var once sync.Once
	kill = func() {
		once.Do(func() {
			require.NoError(t, cmd.Process.Kill(), name)
			_ = cmd.Wait()
			logFile.Close()
		})
	}
	t.Cleanup(kill)
	return kill
}

// startProc runs `bin args…` until the returned stop is called or the test ends: it is
// interrupted, then killed after 15 s. Its output goes to dir/name.log, printed when the
// test fails.
func startProc(t *testing.T, dir, name, bin string, args []string, env map[string]string) (stop func()) {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, processEnv(env)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start(), name)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	var exitErr error
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			select {
			case exitErr = <-done:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				exitErr = errors.Join(errors.New("killed: no exit within 15 s of SIGINT"), <-done)
			}
			logFile.Close()
			if exitErr != nil {
				t.Errorf("%s: %v", name, exitErr)
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil && len(b) > 0 {
				if len(b) > 4000 {
					b = b[len(b)-4000:]
				}
				t.Logf("%s output:\n%s", name, b)
			}
		}
	})
	return stop
}

// processEnv is this process's environment without any TW_ setting, plus env.
func processEnv(env map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TW_") {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func withSetting(env map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for key, val := range env {
		out[key] = val
	}
	return out
}

func loopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

func goCmd() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(os.Getenv("GOROOT"), "bin", "go")
}

// waitFor polls cond every 100 ms until it holds, failing with cond's last account of
// what is missing when within passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s; last seen: %s", within, what, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitUntil is waitFor for a condition with nothing to report.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	waitFor(t, within, what, func() (bool, string) { return cond(), "" })
}

// binaryOnClone builds the taskweave binary into a directory of the test's and clones a
// migrated database for it; both go when the test ends.
func binaryOnClone(t *testing.T) (dir, bin, dbURL string) {
	t.Helper()
	dir = t.TempDir()
	dbURL, err := storetest.CloneURL(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { storetest.Drop(dbURL) })
	bin = filepath.Join(dir, "taskweave")
	out, err := exec.Command(goCmd(), "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return dir, bin, dbURL
}
