package main_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKilledWorkersDeliveryComesBackWithinAMinute: a worker killed (SIGKILL) while a
// webhook attempt is in flight leaves the job running in the table; another worker
// rescues it and sends it again, with the same delivery id (the receiver deduplicates
// by it), within about a minute of the first attempt: River's rescuer horizon is the
// job timeout plus 10 s and it looks every 30 s, and a rescued delivery is sent again
// at once rather than after the retry delay.
func TestKilledWorkersDeliveryComesBackWithinAMinute(t *testing.T) {
	t.Parallel()
	dir, bin, dbURL := binaryOnClone(t)

	type attempt struct {
		at       time.Time
		delivery string
	}
	var mu sync.Mutex
	var attempts []attempt
	release := make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		attempts = append(attempts, attempt{time.Now(), r.Header.Get("X-Taskweave-Delivery")})
		first := len(attempts) == 1
		mu.Unlock()
		if first { // the first attempt hangs until its worker is killed
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(func() { close(release); receiver.Close() })
	seen := func() []attempt {
		mu.Lock()
		defer mu.Unlock()
		return append([]attempt(nil), attempts...)
	}

	env := map[string]string{
		"TW_DATABASE_URL":          dbURL,
		"TW_JWT_SECRET":            strings.Repeat("rescue-test-secret-", 3),
		"TW_WEBHOOK_ALLOW_PRIVATE": "true",
		"TW_ATTACHMENTS_DIR":       filepath.Join(dir, "attachments"),
		"TW_LOG_LEVEL":             "warn",
	}
	apiAddr := loopbackAddr(t)
	startProc(t, dir, "api", bin, []string{"api"}, withSetting(env, "TW_HTTP_ADDR", apiAddr))
	waitUntil(t, 30*time.Second, "the api answers", func() bool { return status(apiAddr, "/readyz") == http.StatusOK })
	c := &client{t: t, base: "http://" + apiAddr}
	token := c.do("POST", "/api/v1/auth/register", "", map[string]any{
		"email": "rescue@example.com", "displayName": "Rescue", "password": "correct-horse-battery"}, 201)["accessToken"].(string)
	c.do("POST", "/api/v1/projects", token, map[string]any{"key": "RESC", "name": "Rescue"}, 201)
	c.do("POST", "/api/v1/projects/RESC/webhooks", token, map[string]any{"url": receiver.URL + "/hook", "events": []string{"issue.created"}}, 201)

	// Worker A takes the delivery and is killed while the receiver holds it.
	killA := startKillable(t, dir, "workerA", bin, []string{"worker"}, withSetting(env, "TW_HTTP_ADDR", loopbackAddr(t)))
	c.do("POST", "/api/v1/projects/RESC/issues", token, map[string]any{"title": "Delivered twice"}, 201)
	waitUntil(t, 30*time.Second, "the first attempt reaches the receiver", func() bool { return len(seen()) == 1 })
	killA()

	// Worker B rescues it.
	startProc(t, dir, "workerB", bin, []string{"worker"}, withSetting(env, "TW_HTTP_ADDR", loopbackAddr(t)))
	waitUntil(t, 100*time.Second, "the delivery is sent again", func() bool { return len(seen()) >= 2 })
	got := seen()
	require.Len(t, got, 2, "sent again once")
	require.NotEmpty(t, got[0].delivery)
	require.Equal(t, got[0].delivery, got[1].delivery, "the same delivery id, for the receiver to deduplicate")
	again := got[1].at.Sub(got[0].at)
	t.Logf("sent again %s after the first attempt", again.Round(time.Second))
	require.Less(t, again, 80*time.Second, "within about a minute (the rescue horizon of 40 s plus at most one 30 s rescuer period)")
}
