package webhook

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestPostSendsWhatWasConfigured: one attempt reaches the receiver with the URL's path
// and query as saved (no normalizing), the signed body and the prefixed headers.
func TestPostSendsWhatWasConfigured(t *testing.T) {
	t.Parallel()
	type seen struct {
		uri, body, event, sig, delivery, ua, ct string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.RequestURI, string(b), r.Header.Get("X-Taskweave-Event"), r.Header.Get("X-Taskweave-Signature"),
			r.Header.Get("X-Taskweave-Delivery"), r.UserAgent(), r.Header.Get("Content-Type")}
		_, _ = w.Write([]byte("thanks"))
	}))
	defer srv.Close()
	s := NewSender(nil, Config{AllowPrivate: true})
	id := uuid.New()
	status, body, err := s.post(context.Background(), id, srv.URL+"/hooks//a%2Fb/../c?x=1&y=%20", "sekrit", "issue.created", `{"a":1}`)
	require.NoError(t, err)
	require.Equal(t, 200, *status)
	require.Equal(t, "thanks", *body)
	require.Equal(t, seen{"/hooks//a%2Fb/../c?x=1&y=%20", `{"a":1}`, "issue.created", Sign([]byte(`{"a":1}`), "sekrit"),
		id.String(), "Taskweave-Webhook/1", "application/json"}, <-got)
}

// TestPostLongRepliesAndHeaders: a 2xx reply declaring a body longer than drainLimit is
// still a delivery (its status counts; the body is not read, so none is kept) and the
// next attempt to the same receiver works on a new connection; a reply header longer
// than fasthttp's default 4 KiB read buffer is read.
func TestPostLongRepliesAndHeaders(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		switch calls.Add(1) {
		case 1:
			_, _ = w.Write([]byte(strings.Repeat("a", 2*drainLimit)))
		case 2:
			w.Header().Set("X-Padding", strings.Repeat("p", 8<<10))
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	s := NewSender(nil, Config{AllowPrivate: true})
	status, body, err := s.post(context.Background(), uuid.New(), srv.URL, "k", "issue.created", "{}")
	require.NoError(t, err)
	require.Equal(t, 200, *status)
	require.Empty(t, *body)

	status, _, err = s.post(context.Background(), uuid.New(), srv.URL, "k", "issue.created", "{}")
	require.NoError(t, err)
	require.Equal(t, 202, *status)

	status, _, err = s.post(context.Background(), uuid.New(), srv.URL, "k", "issue.created", "{}")
	require.EqualError(t, err, "webhook receiver answered 500")
	require.Equal(t, 500, *status)
}

// TestPostGivesUpAfterTheTimeout: a receiver slower than Config.Timeout fails the
// attempt at the timeout, with no status.
func TestPostGivesUpAfterTheTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	s := NewSender(nil, Config{AllowPrivate: true, Timeout: 300 * time.Millisecond})
	start := time.Now()
	status, _, err := s.post(context.Background(), uuid.New(), srv.URL, "k", "issue.created", "{}")
	require.Error(t, err)
	require.Nil(t, status)
	require.Less(t, time.Since(start), 3*time.Second)
	require.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)
}

// TestPostAfterTheReceiverClosedAnIdleConnection: a receiver that closes idle
// keep-alive connections sooner than the client drops them (Node's default is 5 s) must
// not fail the next attempt: fasthttp sees the close only when it reuses the connection,
// and then sends the POST again on a new one.
func TestPostAfterTheReceiverClosedAnIdleConnection(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		calls.Add(1)
	}))
	srv.Config.IdleTimeout = 50 * time.Millisecond
	srv.Start()
	defer srv.Close()
	s := NewSender(nil, Config{AllowPrivate: true})
	for i := range 3 {
		status, _, err := s.post(context.Background(), uuid.New(), srv.URL, "k", "issue.created", "{}")
		require.NoError(t, err, "attempt %d", i)
		require.Equal(t, 200, *status)
		time.Sleep(200 * time.Millisecond) // the receiver closes the idle connection
	}
	require.EqualValues(t, 3, calls.Load(), "each delivery reached the receiver once")
}

// TestPostOverTLS: an https receiver is reached, its certificate checked against the
// trusted roots (here the test server's own), and a receiver whose certificate is not
// trusted fails the attempt.
func TestPostOverTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	untrusted := NewSender(nil, Config{AllowPrivate: true})
	_, _, err := untrusted.post(context.Background(), uuid.New(), srv.URL, "k", "issue.created", "{}")
	require.ErrorContains(t, err, "certificate")

	s := NewSender(nil, Config{AllowPrivate: true})
	s.client.TLSConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	status, _, err := s.post(context.Background(), uuid.New(), srv.URL, "k", "issue.created", "{}")
	require.NoError(t, err)
	require.Equal(t, 204, *status)
}
