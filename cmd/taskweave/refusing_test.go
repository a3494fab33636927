package main_test

import (
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/stomp/stomptest"
)

// pgProxy stands between a process and Postgres. It forwards connections, and on demand
// refuses new ones as a full server does (an ErrorResponse with SQLSTATE 53300, "too
// many clients") and drops every open one, so a test can stage the database outages
// operators see.
type pgProxy struct {
	ln     net.Listener
	target string
	refuse atomic.Bool

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func newPGProxy(t *testing.T, target string) *pgProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &pgProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); p.drop() })
	go p.serve()
	return p
}

// url is dbURL with its host replaced by the proxy's address.
func (p *pgProxy) url(t *testing.T, dbURL string) string {
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	u.Host = p.ln.Addr().String()
	return u.String()
}

func (p *pgProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.refuse.Load() {
			go refuseTooManyClients(c)
			continue
		}
		go p.forward(c)
	}
}

func (p *pgProxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *pgProxy) forward(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer up.Close()
	p.track(c, true)
	p.track(up, true)
	defer p.track(c, false)
	defer p.track(up, false)
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
}

// drop closes every forwarded connection, as a network partition or a restarted
// database does.
func (p *pgProxy) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// refuseTooManyClients answers a connection's start-up as Postgres does when
// max_connections is reached: it declines SSL, reads the startup message and sends a
// FATAL ErrorResponse with SQLSTATE 53300.
func refuseTooManyClients(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	for {
		var head [8]byte
		if _, err := io.ReadFull(c, head[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(head[:4]))
		if n < 8 || n > 1<<16 {
			return
		}
		if _, err := io.CopyN(io.Discard, c, int64(n-8)); err != nil {
			return
		}
		code := binary.BigEndian.Uint32(head[4:])
		if code == 80877103 || code == 80877104 { // SSLRequest, GSSENCRequest
			if _, err := c.Write([]byte("N")); err != nil {
				return
			}
			continue
		}
		break
	}
	var body []byte
	for _, f := range []struct {
		k byte
		v string
	}{{'S', "FATAL"}, {'V', "FATAL"}, {'C', "53300"}, {'M', "sorry, too many clients already"}} {
		body = append(body, f.k)
		body = append(body, f.v...)
		body = append(body, 0)
	}
	body = append(body, 0)
	msg := []byte{'E', 0, 0, 0, 0}
	binary.BigEndian.PutUint32(msg[1:], uint32(len(body)+4))
	_, _ = c.Write(append(msg, body...))
}

// TestRefusingDatabaseDoesNotSpendDeliveryAttempts: a worker whose database refuses new
// connections (53300) keeps delivering on the connections its pool holds, with no
// attempt spent; when it also loses those, its /readyz answers 503, nothing it could not
// run counts as an attempt, and once the database takes connections again every
// delivery of the window goes out on its first attempt, without a restart.
func TestRefusingDatabaseDoesNotSpendDeliveryAttempts(t *testing.T) {
	t.Parallel()
	dir, bin, dbURL := binaryOnClone(t)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	proxy := newPGProxy(t, u.Host)

	var mu sync.Mutex
	received := map[string]int{}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		received[r.Header.Get("X-Taskweave-Delivery")]++
		mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(receiver.Close)
	deliveries := func() (ids, total int) {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range received {
			total += n
		}
		return len(received), total
	}

	env := map[string]string{
		"TW_DATABASE_URL":          dbURL,
		"TW_JWT_SECRET":            strings.Repeat("refusing-test-secret-", 3),
		"TW_WEBHOOK_ALLOW_PRIVATE": "true",
		"TW_ATTACHMENTS_DIR":       filepath.Join(dir, "attachments"),
		"TW_LOG_LEVEL":             "warn",
	}
	apiAddr, workerAddr := loopbackAddr(t), loopbackAddr(t)
	startProc(t, dir, "api", bin, []string{"api"}, withSetting(env, "TW_HTTP_ADDR", apiAddr))
	workerEnv := withSetting(env, "TW_HTTP_ADDR", workerAddr)
	workerEnv["TW_DATABASE_URL"] = proxy.url(t, dbURL) // withSetting keeps env's own value
	startProc(t, dir, "worker", bin, []string{"worker"}, workerEnv)
	waitUntil(t, 30*time.Second, "both processes are ready", func() bool {
		return status(apiAddr, "/readyz") == http.StatusOK && status(workerAddr, "/readyz") == http.StatusOK
	})
	c := &client{t: t, base: "http://" + apiAddr}
	token := c.do("POST", "/api/v1/auth/register", "", map[string]any{
		"email": "refusing@example.com", "displayName": "Refusing", "password": "correct-horse-battery"}, 201)["accessToken"].(string)
	c.do("POST", "/api/v1/projects", token, map[string]any{"key": "REF", "name": "Refusing"}, 201)
	c.do("POST", "/api/v1/projects/REF/webhooks", token, map[string]any{"url": receiver.URL + "/hook", "events": []string{"issue.created"}}, 201)
	create := func(n int) {
		for range n {
			c.do("POST", "/api/v1/projects/REF/issues", token, map[string]any{"title": "Delivered once"}, 201)
		}
	}

	// 1. New connections are refused; the worker's held connections carry on.
	proxy.refuse.Store(true)
	create(10)
	waitUntil(t, 30*time.Second, "ten deliveries while refusing", func() bool { ids, _ := deliveries(); return ids == 10 })
	require.Equal(t, http.StatusOK, status(workerAddr, "/readyz"), "a worker with its connections is ready")

	// 2. The worker loses its connections too: it is not ready, and what is created
	// meanwhile waits instead of failing.
	proxy.drop()
	waitUntil(t, 15*time.Second, "the worker reports the database", func() bool {
		return status(workerAddr, "/readyz") == http.StatusServiceUnavailable
	})
	create(5)
	time.Sleep(3 * time.Second) // the window: every retry of the worker's is refused
	ids, _ := deliveries()
	require.Equal(t, 10, ids, "nothing is delivered while the worker cannot reach its database")

	// 3. The database takes connections again.
	proxy.refuse.Store(false)
	waitUntil(t, 60*time.Second, "the window's deliveries go out", func() bool { ids, _ := deliveries(); return ids == 15 })
	waitUntil(t, 15*time.Second, "the worker is ready again", func() bool { return status(workerAddr, "/readyz") == http.StatusOK })

	pool, err := pgxpool.New(t.Context(), dbURL)
	require.NoError(t, err)
	defer pool.Close()
	waitUntil(t, 15*time.Second, "every delivery job completed", func() bool {
		var open int
		require.NoError(t, pool.QueryRow(t.Context(),
			`SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver' AND state <> 'completed'`).Scan(&open))
		return open == 0
	})
	var completed, spent int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*), count(*) FILTER (WHERE attempt > 1 OR errors IS NOT NULL)
		FROM river_job WHERE kind = 'webhook.deliver'`).Scan(&completed, &spent))
	require.Equal(t, 15, completed)
	require.Zero(t, spent, "no delivery spent an attempt on the database's refusals")
	_, total := deliveries()
	require.Equal(t, 15, total, "each delivery sent once")
}

// TestDroppedDatabaseConnectionsNeverLoseABoardMoveSilently: the network between one API
// replica and Postgres drops every connection, its LISTEN one among them, and refuses new
// ones for a moment. A board move made meanwhile on another replica reaches no subscriber
// of the first through its lost listener, so each subscribed session there ends with
// ERROR reason RESYNC (reconnect and reload) once the listener is back, instead of
// silently missing the move; a client that reconnects gets the next move.
func TestDroppedDatabaseConnectionsNeverLoseABoardMoveSilently(t *testing.T) {
	t.Parallel()
	dir, bin, dbURL := binaryOnClone(t)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	proxy := newPGProxy(t, u.Host)
	env := map[string]string{
		"TW_DATABASE_URL":    dbURL,
		"TW_JWT_SECRET":      strings.Repeat("dropped-test-secret-", 3),
		"TW_ATTACHMENTS_DIR": filepath.Join(dir, "attachments"),
		"TW_LOG_LEVEL":       "warn",
	}
	behind, direct := loopbackAddr(t), loopbackAddr(t)
	behindEnv := withSetting(env, "TW_HTTP_ADDR", behind)
	behindEnv["TW_DATABASE_URL"] = proxy.url(t, dbURL) // withSetting keeps env's own value
	startProc(t, dir, "api-behind-proxy", bin, []string{"api"}, behindEnv)
	startProc(t, dir, "api", bin, []string{"api"}, withSetting(env, "TW_HTTP_ADDR", direct))
	waitUntil(t, 30*time.Second, "both replicas are ready", func() bool {
		return status(behind, "/readyz") == http.StatusOK && status(direct, "/readyz") == http.StatusOK
	})
	c := &client{t: t, base: "http://" + direct}
	token := c.do("POST", "/api/v1/auth/register", "", map[string]any{
		"email": "dropped@example.com", "displayName": "Dropped", "password": "correct-horse-battery"}, 201)["accessToken"].(string)
	c.do("POST", "/api/v1/projects", token, map[string]any{"key": "DROP", "name": "Dropped"}, 201)
	statuses := map[string]string{}
	wf := c.do("GET", "/api/v1/projects/DROP/workflow", token, nil, 200)
	for _, s := range wf["statuses"].([]any) {
		st := s.(map[string]any)
		statuses[st["category"].(string)] = st["id"].(string)
	}
	issue := c.do("POST", "/api/v1/projects/DROP/issues", token, map[string]any{"title": "Moved in the gap"}, 201)["key"].(string)

	subscribe := func() *stomptest.Client {
		s, err := stomptest.Dial(t.Context(), "ws://"+behind+"/ws-stomp", "v12.stomp")
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		_, err = s.Connect(token, "")
		require.NoError(t, err)
		_, err = s.Subscribe("b", "/topic/projects/DROP")
		require.NoError(t, err)
		return s
	}
	sub := subscribe()

	proxy.refuse.Store(true)
	proxy.drop()
	c.do("PATCH", "/api/v1/projects/DROP/issues/"+issue, token, map[string]any{"statusId": statuses["IN_PROGRESS"]}, 200)
	time.Sleep(time.Second)
	proxy.refuse.Store(false)

	fr, err := sub.Read(15 * time.Second)
	require.NoError(t, err, "the subscriber is told of the gap")
	require.Equal(t, "ERROR", fr.Command, "%s", fr.Body)
	require.Equal(t, "RESYNC", fr.Value("reason"))

	again := subscribe()
	c.do("PATCH", "/api/v1/projects/DROP/issues/"+issue, token, map[string]any{"statusId": statuses["DONE"]}, 200)
	msg, err := again.Expect("MESSAGE", 10*time.Second)
	require.NoError(t, err)
	require.Contains(t, string(msg.Body), `"ISSUE_MOVED"`)
}
