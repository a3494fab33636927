package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/webhook"
)

// whHit is one request a receiver got.
type whHit struct {
	at     time.Time // when the handler answered
	header http.Header
	body   []byte
	// before is the delivery row's next_retry_at as the attempt found it (nil = NULL).
	before *time.Time
}

// whReceiver is a real HTTP endpoint on 127.0.0.1 recording every request; status
// picks the answer to the nth request (1-based).
type whReceiver struct {
	srv    *httptest.Server
	h      *apitest.Harness
	status func(n int) int
	mu     sync.Mutex
	hits   []whHit
	// location, when set, is sent as every reply's Location header (redirectTo).
	location string
}

func whNewReceiver(t *testing.T, h *apitest.Harness, status func(n int) int) *whReceiver {
	t.Helper()
	r := &whReceiver{h: h, status: status}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		hit := whHit{header: req.Header.Clone(), body: body}
		if id := req.Header.Get("X-Taskweave-Delivery"); id != "" {
			var next *time.Time
			_ = h.DB.Pool.QueryRow(context.Background(), "SELECT next_retry_at FROM webhook_deliveries WHERE id = $1", id).Scan(&next)
			hit.before = next
		}
		r.mu.Lock()
		n := len(r.hits) + 1
		code := http.StatusOK
		if r.status != nil {
			code = r.status(n)
		}
		hit.at = time.Now()
		r.hits = append(r.hits, hit)
		location := r.location
		r.mu.Unlock()
		if location != "" {
			w.Header().Set("Location", location)
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, "reply "+http.StatusText(code))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *whReceiver) url() string { return r.srv.URL + "/hook" }

// redirectTo makes every reply carry Location: url, as a redirect does.
func (r *whReceiver) redirectTo(url string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.location = url
}

// got returns a copy of the hits so far.
func (r *whReceiver) got() []whHit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]whHit(nil), r.hits...)
}

// wait polls until n requests arrived and returns them.
func (r *whReceiver) wait(t *testing.T, n int, within time.Duration) []whHit {
	t.Helper()
	apitest.Eventually(t, within, func() bool { return len(r.got()) >= n }, "webhook requests arrived")
	return r.got()
}

// whHarness is a fresh harness whose webhooks may target 127.0.0.1, with short retries.
func whHarness(t *testing.T, delays ...time.Duration) *apitest.Harness {
	t.Helper()
	return apitest.New(t, apitest.Options{Configure: func(s *api.Settings) {
		s.Webhook = webhook.Config{AllowPrivate: true, RetryDelays: delays}
	}})
}

// whCreate makes a webhook as token and returns the created reply's webhook and secret.
func whCreate(t *testing.T, h *apitest.Harness, key, token string, body map[string]any) (map[string]any, string) {
	t.Helper()
	r := h.Do("POST", "/api/v1/projects/"+key+"/webhooks", body, token)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m := r.JSON(t)
	return m["webhook"].(map[string]any), m["plaintextSecret"].(string)
}

// whVerify checks the signature header of a hit against secret.
func whVerify(t *testing.T, hit whHit, secret string) {
	t.Helper()
	sig := hit.header.Get("X-Taskweave-Signature")
	require.Regexp(t, `^sha256=[0-9a-f]{64}$`, sig)
	require.Equal(t, webhook.Sign(hit.body, secret), sig)
	require.False(t, strings.Contains(string(hit.body), secret), "the secret is never sent")
}
