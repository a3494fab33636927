// Package apitest drives the real Fiber app, with real auth and a real database, for
// HTTP tests of every package.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/pipeline"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/migrations"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/workers"
)

// Secret is the JWT secret of test servers.
const Secret = "test-secret-test-secret-test-secret!"

// Password is a valid password for test users.
const Password = "correct horse battery"

// Options tune one harness; zero values give a permissive test setup.
type Options struct {
	// DB defaults to a fresh clone.
	DB *store.DB
	// Configure edits the settings before wiring.
	Configure func(*api.Settings)
	// AttachmentStorage, when set, wraps the local storage under Settings.AttachmentsDir
	// (a storage whose Remove fails, say); the result is the server's storage.
	AttachmentStorage func(local attachment.Storage) attachment.Storage
}

// Harness is a wired server on a real database.
type Harness struct {
	T        testing.TB
	DB       *store.DB
	Server   *api.Server
	Settings api.Settings
	Registry *prometheus.Registry
	// WorkerRegistry holds the metrics of the workers StartWorkers started last.
	WorkerRegistry *prometheus.Registry
}

// New wires a server. Rate limits are high unless Configure lowers them, and password
// hashing is cheap (argon2id with 1 MiB) so tests stay fast.
func New(tb testing.TB, opts Options) *Harness {
	tb.Helper()
	db := opts.DB
	if db == nil {
		db = storetestNewDB(tb)
	}
	s := api.Settings{
		Config:    api.Config{RequestTimeout: 10 * time.Second, BaseURL: "http://localhost:8080"},
		JWTSecret: Secret, AccessTokenTTL: 15 * time.Minute, RefreshTokenTTL: 168 * time.Hour,
		RegistrationEnabled: true, AuthRateLimit: 100000, AuthRateWindow: time.Minute,
		Password: auth.PasswordParams{MemoryKiB: 1024, Time: 1, Threads: 1},
	}
	if opts.Configure != nil {
		opts.Configure(&s)
	}
	if s.AttachmentsDir == "" {
		s.AttachmentsDir = tb.TempDir()
	}
	if s.MaxUploadBytes == 0 {
		s.MaxUploadBytes = 25 << 20
	}
	if opts.AttachmentStorage != nil {
		local, err := attachment.NewLocal(s.AttachmentsDir)
		require.NoError(tb, err)
		s.AttachmentStorage = opts.AttachmentStorage(local)
	}
	inserter, err := jobs.NewInserter(db.SQL, nil)
	require.NoError(tb, err)
	reg := prometheus.NewRegistry()
	ready := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return migrations.Ready(ctx, db.Pool)
	}
	srv, err := api.Wire(s, TestLogger(tb), db, reg, inserter, ready)
	require.NoError(tb, err)
	return &Harness{T: tb, DB: db, Server: srv, Settings: s, Registry: reg}
}

// Response is a finished request.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body as an object.
func (r *Response) JSON(tb testing.TB) map[string]any {
	tb.Helper()
	var m map[string]any
	require.NoError(tb, json.Unmarshal(r.Body, &m), "body: %s", r.Body)
	return m
}

// Array decodes the body as an array.
func (r *Response) Array(tb testing.TB) []any {
	tb.Helper()
	var a []any
	require.NoError(tb, json.Unmarshal(r.Body, &a), "body: %s", r.Body)
	return a
}

// Do sends one request through the app. body may be nil, a string/[]byte (sent raw)
// or anything else (sent as JSON). headers are name, value pairs. Every answer is
// checked against the OpenAPI document (CheckOpenAPI): an undeclared status, content
// type or body fails the test.
func (h *Harness) Do(method, path string, body any, token string, headers ...string) *Response {
	h.T.Helper()
	var rd io.Reader
	var sent []byte
	switch b := body.(type) {
	case nil:
	case string:
		sent = []byte(b)
	case []byte:
		sent = b
	default:
		raw, err := json.Marshal(b)
		require.NoError(h.T, err)
		sent = raw
	}
	if body != nil {
		rd = bytes.NewReader(sent)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := h.Server.App.Test(req, 30_000)
	require.NoError(h.T, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(h.T, err)
	if err := CheckOpenAPI(Exchange{Method: method, Target: path, RequestHeader: req.Header, RequestBody: sent,
		Status: resp.StatusCode, Header: resp.Header, Body: raw}); err != nil {
		h.T.Error(err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// User is a registered test user.
type User struct {
	ID      uuid.UUID
	Email   string
	Access  string
	Refresh string
}

// Register creates a user with Password and returns its tokens.
func (h *Harness) Register(name string) User {
	h.T.Helper()
	email := fmt.Sprintf("%s-%s@example.com", name, uuid.NewString()[:8])
	r := h.Do("POST", "/api/v1/auth/register", map[string]any{"email": email, "displayName": name, "password": Password}, "")
	require.Equal(h.T, http.StatusCreated, r.Status, "register: %s", r.Body)
	m := r.JSON(h.T)
	u := User{Email: strings.ToLower(email), Access: m["accessToken"].(string), Refresh: m["refreshToken"].(string)}
	me := h.Do("GET", "/api/v1/auth/me", nil, u.Access)
	require.Equal(h.T, http.StatusOK, me.Status, "me: %s", me.Body)
	u.ID = uuid.MustParse(me.JSON(h.T)["id"].(string))
	return u
}

// MakeAdmin gives u the system role ADMIN directly in the database.
func (h *Harness) MakeAdmin(u User) { h.SetSystemRole(u, "ADMIN") }

// SetSystemRole sets u's system role directly in the database (on a shared database the
// first registration of the package is ADMIN, whichever test made it).
func (h *Harness) SetSystemRole(u User, role string) {
	h.T.Helper()
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE users SET system_role = $2 WHERE id = $1", u.ID, role)
	require.NoError(h.T, err)
}

// StartWorkers runs the real worker client on the harness database until the test ends.
func (h *Harness) StartWorkers() { h.T.Helper(); h.StartWorkersWith(nil) }

// StartWorkersWith is StartWorkers with the worker configuration edited by tweak (nil:
// none). The workers' webhook configuration starts as the server's (Settings.Webhook);
// their metrics land in h.WorkerRegistry.
func (h *Harness) StartWorkersWith(tweak func(*workers.Config)) {
	h.T.Helper()
	cfg := workers.Config{Concurrency: 4, Webhook: h.Settings.Webhook}
	if tweak != nil {
		tweak(&cfg)
	}
	h.WorkerRegistry = prometheus.NewRegistry()
	// The workers build their own bus, as a worker process does.
	inserter, err := jobs.NewInserter(h.DB.SQL, nil)
	require.NoError(h.T, err)
	bus := pipeline.New(inserter, pipeline.Config{Webhook: cfg.Webhook}).Bus
	client, err := workers.NewClient(cfg, workers.Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: h.DB, Registry: h.WorkerRegistry, Bus: bus})
	require.NoError(h.T, err)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(h.T, client.Start(ctx))
	h.T.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = client.Stop(sctx)
		cancel()
	})
}

// Eventually polls cond every 20 ms until it holds or the deadline passes.
func Eventually(tb testing.TB, within time.Duration, cond func() bool, msg string) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatalf("condition not met within %s: %s", within, msg)
}

// Count runs a count query.
func (h *Harness) Count(query string, args ...any) int {
	h.T.Helper()
	var n int
	require.NoError(h.T, h.DB.Pool.QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}

// TestLogger logs warnings and errors through tb, so a failing test shows why.
func TestLogger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
