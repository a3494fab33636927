package apitest

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
	"github.com/taskweave/taskweave/domain/webhook"
)

// Hit is one request a receiver got.
type Hit struct {
	At     time.Time // when the handler answered
	Header http.Header
	Body   []byte
	// before is the delivery row's next_retry_at as the attempt found it (nil = NULL).
	Before *time.Time
}

// Receiver is a real HTTP endpoint on 127.0.0.1 recording every request; status
// picks the answer to the nth request (1-based).
type Receiver struct {
	srv    *httptest.Server
	h      *Harness
	status func(n int) int
	mu     sync.Mutex
	hits   []Hit
	// location, when set, is sent as every reply's Location header (redirectTo).
	location string
}

// NewReceiver starts a receiver until the test ends; status nil answers 200.
func NewReceiver(t testing.TB, h *Harness, status func(n int) int) *Receiver {
	t.Helper()
	r := &Receiver{h: h, status: status}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		hit := Hit{Header: req.Header.Clone(), Body: body}
		if id := req.Header.Get("X-Taskweave-Delivery"); id != "" {
			var next *time.Time
			_ = h.DB.Pool.QueryRow(context.Background(), "SELECT next_retry_at FROM webhook_deliveries WHERE id = $1", id).Scan(&next)
			hit.Before = next
		}
		r.mu.Lock()
		n := len(r.hits) + 1
		code := http.StatusOK
		if r.status != nil {
			code = r.status(n)
		}
		hit.At = time.Now()
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

// URL is where the receiver listens.
func (r *Receiver) URL() string { return r.srv.URL + "/hook" }

// RedirectTo makes every reply carry Location: url, as a redirect does.
func (r *Receiver) RedirectTo(url string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.location = url
}

// Got returns a copy of the hits so far.
func (r *Receiver) Got() []Hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Hit(nil), r.hits...)
}

// Wait polls until n requests arrived and returns them.
func (r *Receiver) Wait(t testing.TB, n int, within time.Duration) []Hit {
	t.Helper()
	Eventually(t, within, func() bool { return len(r.Got()) >= n }, "webhook requests arrived")
	return r.Got()
}

// WebhookHarness is a fresh harness whose webhooks may target 127.0.0.1, with short retries.
func WebhookHarness(t testing.TB, delays ...time.Duration) *Harness {
	t.Helper()
	return New(t, Options{Configure: func(s *api.Settings) {
		s.Webhook = webhook.Config{AllowPrivate: true, RetryDelays: delays}
	}})
}

// CreateWebhook makes a webhook as token and returns the created reply's webhook and secret.
func CreateWebhook(t testing.TB, h *Harness, key, token string, body map[string]any) (map[string]any, string) {
	t.Helper()
	r := h.Do("POST", "/api/v1/projects/"+key+"/webhooks", body, token)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m := r.JSON(t)
	return m["webhook"].(map[string]any), m["plaintextSecret"].(string)
}

// VerifySignature checks the signature header of a hit against secret.
func VerifySignature(t testing.TB, hit Hit, secret string) {
	t.Helper()
	sig := hit.Header.Get("X-Taskweave-Signature")
	require.Regexp(t, `^sha256=[0-9a-f]{64}$`, sig)
	require.Equal(t, webhook.Sign(hit.Body, secret), sig)
	require.False(t, strings.Contains(string(hit.Body), secret), "the secret is never sent")
}

// PublicWebhookURL is a public address literal: it passes the address check without any DNS
// lookup and is never actually called by these tests (3ffe::/16, the 6bone's space,
// returned to IANA in 2006 and unallocated since: global unicast, routed nowhere).
const PublicWebhookURL = "http://[3ffe::10]/hook"
