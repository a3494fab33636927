package stomp

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/contrib/websocket"
	"github.com/gofiber/fiber/v2"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/realtime"
	"github.com/taskweave/taskweave/domain/revoke"
)

// Config is what the endpoint needs from the rest of the API.
type Config struct {
	Log *slog.Logger
	// Authenticate verifies the bearer token of a CONNECT frame; an error wrapping
	// auth.ErrUnauthenticated refuses the client, any other is a server failure. It runs
	// again on a revocation notice for the session's user (deactivated, deleted, a login
	// session ended).
	Authenticate func(ctx context.Context, token string) (*auth.Principal, error)
	// MayRead reports whether p may follow projectKey's board now (current membership);
	// an unknown project is false, not an error. It runs at SUBSCRIBE and again on a
	// revocation notice for the subscriber or the project.
	MayRead func(ctx context.Context, p *auth.Principal, projectKey string) (bool, error)
	// HeartBeat is the interval the server offers both ways (default 10 s); the
	// negotiated interval is the larger of it and the client's.
	HeartBeat time.Duration
	// SendQueue is how many frames may wait for a slow client, beside the batch its
	// writer is sending, before it is dropped (default 256).
	SendQueue int
	// ConnectTimeout is how long a new connection may take to send CONNECT (default 10 s).
	ConnectTimeout time.Duration
	// WriteTimeout bounds one write to a client (default 10 s).
	WriteTimeout time.Duration
	// MaxSubscriptions per connection (default 64).
	MaxSubscriptions int
	Limits           Limits
}

func (c Config) withDefaults() Config {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.HeartBeat <= 0 {
		c.HeartBeat = 10 * time.Second
	}
	if c.SendQueue <= 0 {
		c.SendQueue = 256
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 10 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 10 * time.Second
	}
	if c.MaxSubscriptions <= 0 {
		c.MaxSubscriptions = 64
	}
	if c.Limits.MaxFrame <= 0 {
		c.Limits.MaxFrame = DefaultLimits.MaxFrame
	}
	if c.Limits.MaxHeaders <= 0 {
		c.Limits.MaxHeaders = DefaultLimits.MaxHeaders
	}
	return c
}

// Source is where committed messages come from: realtime.Listener in the API, nothing
// (messages handed to Deliver) in unit tests.
type Source interface {
	Run(ctx context.Context)
	WaitReady(ctx context.Context) error
}

// Subprotocols are the WebSocket subprotocols offered, best first; a client offering
// none is served too (STOMP 1.2 over a bare WebSocket).
var Subprotocols = []string{"v12.stomp", "v11.stomp", "v10.stomp"}

// Hub is one API process's set of STOMP sessions and their subscriptions. It holds no
// state a client depends on beyond the local subscriber set: every message comes from
// Postgres, so any replica serves any client.
type Hub struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc

	source    Source
	startOnce sync.Once
	sourceRun sync.WaitGroup

	mu       sync.RWMutex
	closed   bool
	sessions map[*session]struct{}
	// users maps a user to its connected (authenticated) sessions.
	users map[uuid.UUID]map[*session]struct{}
	// subs maps an internal destination to its local subscriptions.
	subs map[string]map[subKey]string

	messageSeq atomic.Uint64
	sessionSeq atomic.Uint64
	live       sync.WaitGroup
	// revocations counts the revocation notices received; a CONNECT or SUBSCRIBE that
	// checked access while one arrived checks again (see recheckIfRevoked).
	revocations atomic.Uint64
	// checks are the running access checks, awaited by Close.
	checks sync.WaitGroup
}

// subKey is one subscription of one session; the map value is the destination the
// client subscribed to (what its MESSAGE frames carry).
type subKey struct {
	s  *session
	id string
}

// NewHub builds a hub; Attach a Source before serving.
func NewHub(cfg Config) *Hub {
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{cfg: cfg.withDefaults(), ctx: ctx, cancel: cancel, sessions: map[*session]struct{}{},
		users: map[uuid.UUID]map[*session]struct{}{}, subs: map[string]map[subKey]string{}}
}

// Attach sets the source of messages; call it once, before Start.
func (h *Hub) Attach(src Source) { h.source = src }

// Start runs the source until Close. It is idempotent: the app starts it when it
// listens, and the first subscription starts it if nothing did.
func (h *Hub) Start() {
	h.startOnce.Do(func() {
		if h.source == nil {
			return
		}
		h.sourceRun.Add(1)
		go func() {
			defer h.sourceRun.Done()
			h.source.Run(h.ctx)
		}()
	})
}

// waitReady blocks until the source delivers what commits from now on.
func (h *Hub) waitReady(ctx context.Context) error {
	if h.source == nil {
		return nil
	}
	h.Start()
	return h.source.WaitReady(ctx)
}

// Close ends every session and stops the source, waiting for both.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	sessions := make([]*session, 0, len(h.sessions))
	for s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	h.cancel()
	for _, s := range sessions {
		s.end(nil, false)
	}
	h.live.Wait()
	h.checks.Wait()
	h.sourceRun.Wait()
}

// Sessions is the number of open connections.
func (h *Hub) Sessions() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.sessions)
}

// writeBuffers is the one pool of 4,096-byte WebSocket write buffers all sessions share.
var writeBuffers = &sync.Pool{}

// Handler upgrades a request to a STOMP WebSocket. It answers fiber.ErrUpgradeRequired
// to a request that is no WebSocket handshake; the caller renders that.
func (h *Hub) Handler() fiber.Handler {
	return websocket.New(h.serve, websocket.Config{
		Subprotocols: Subprotocols,
		// Credentials travel in the CONNECT frame, never in cookies, so a foreign page
		// gains nothing by opening a socket: every origin may connect.
		Origins: []string{"*"},
		// Clients send small frames (CONNECT, SUBSCRIBE, ACK); a bigger one is read
		// in several pieces.
		ReadBufferSize:  1024,
		WriteBufferSize: 4096,
		// An idle connection holds no write buffer: a frame borrows one from the pool
		// for the write only. Board fan-out keeps thousands of mostly idle sockets
		// open, so this is most of a connection's memory (docs/performance.md#fan-out).
		WriteBufferPool: writeBuffers,
		RecoverHandler: func(c *websocket.Conn) {
			if r := recover(); r != nil {
				h.cfg.Log.Error("stomp session panic", "panic", r)
			}
		},
	})
}

// register adds a new session; false when the hub is closing.
func (h *Hub) register(s *session) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.sessions[s] = struct{}{}
	h.live.Add(1)
	return true
}

// unregister drops a session and all its subscriptions.
func (h *Hub) unregister(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.sessions[s]; !ok {
		return
	}
	delete(h.sessions, s)
	s.mu.Lock()
	for id, sub := range s.subs {
		h.removeLocked(sub.key, subKey{s, id})
	}
	s.mu.Unlock()
	if u := s.userID(); u != uuid.Nil {
		delete(h.users[u], s)
		if len(h.users[u]) == 0 {
			delete(h.users, u)
		}
	}
	h.live.Done()
}

// connected records that s is authenticated as user.
func (h *Hub) connected(s *session, user uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.sessions[s]; !ok {
		return
	}
	m := h.users[user]
	if m == nil {
		m = map[*session]struct{}{}
		h.users[user] = m
	}
	m[s] = struct{}{}
}

func (h *Hub) subscribe(s *session, key string, id, dest string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.subs[key]
	if m == nil {
		m = map[subKey]string{}
		h.subs[key] = m
	}
	m[subKey{s, id}] = dest
}

func (h *Hub) unsubscribe(s *session, key, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeLocked(key, subKey{s, id})
}

func (h *Hub) removeLocked(key string, k subKey) {
	if m := h.subs[key]; m != nil {
		delete(m, k)
		if len(m) == 0 {
			delete(h.subs, key)
		}
	}
}

// Deliver sends m to every local subscriber of its destination. It never blocks: a
// session whose queue is full is dropped, so one slow client cannot hold up the rest.
// A revocation notice is no message: it starts access checks of the sessions concerned.
func (h *Hub) Deliver(m realtime.Message) {
	if n, ok := revoke.Parse(m.Destination); ok {
		h.revoked(n)
		return
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	subs := h.subs[m.Destination]
	if len(subs) == 0 {
		return
	}
	id := strconv.FormatUint(h.messageSeq.Add(1), 10)
	for k, dest := range subs {
		f := Frame{Command: "MESSAGE", Headers: []Header{
			{"destination", dest}, {"content-type", "application/json"}, {"subscription", k.id},
			{"message-id", id + "-" + k.s.id}, {"content-length", strconv.Itoa(len(m.Body))},
		}, Body: m.Body}
		k.s.enqueue(f.Bytes())
	}
}

// revoked checks, each on its own goroutine, the sessions a revocation notice concerns:
// every session of the user, or every local follower of the project.
func (h *Hub) revoked(n revoke.Notice) {
	h.revocations.Add(1)
	h.mu.RLock()
	var targets []*session
	if n.User != uuid.Nil {
		for s := range h.users[n.User] {
			targets = append(targets, s)
		}
	} else {
		seen := map[*session]bool{}
		for k := range h.subs[realtime.ProjectTopic(n.ProjectKey)] {
			if !seen[k.s] {
				seen[k.s] = true
				targets = append(targets, k.s)
			}
		}
	}
	h.mu.RUnlock()
	for _, s := range targets {
		h.recheck(s)
	}
}

// resyncMessage is the ERROR a subscribed session gets when live messages may have been
// missed (docs/api-conventions.md#real-time): the client reconnects and reloads.
const resyncMessage = "live updates were interrupted and some may have been missed: reconnect and reload"

// Resync handles a reconnect of the realtime listener: whatever was published while it
// was disconnected never arrives, so every session with a subscription is ended with an
// ERROR frame (header reason: RESYNC) telling the client to reconnect and reload, rather
// than be left silently out of date; sessions without one have their access checked
// again (revocation notices may have been missed too).
func (h *Hub) Resync() {
	h.revocations.Add(1)
	h.mu.RLock()
	if h.closed {
		h.mu.RUnlock()
		return
	}
	var subscribed, idle []*session
	for s := range h.sessions {
		s.mu.Lock()
		n := len(s.subs)
		s.mu.Unlock()
		if n > 0 {
			subscribed = append(subscribed, s)
		} else {
			idle = append(idle, s)
		}
	}
	h.mu.RUnlock()
	if len(subscribed) > 0 {
		h.cfg.Log.Warn("stomp: realtime listener reconnected; ending subscribed sessions so their clients reload", "sessions", len(subscribed))
	}
	for _, s := range subscribed {
		s.end(errorFrame(resyncMessage, "", s.version, Header{Name: "reason", Value: "RESYNC"}), true)
	}
	for _, s := range idle {
		h.recheck(s)
	}
}

// recheck runs s.checkAccess on its own goroutine (the listener's must not block) unless
// the hub is closing.
func (h *Hub) recheck(s *session) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return
	}
	h.checks.Add(1)
	go func() {
		defer h.checks.Done()
		s.checkAccess()
	}()
}

// recheckIfRevoked checks s again when a revocation notice arrived since seen (a value
// of revocations): a CONNECT or SUBSCRIBE that read access before the change committed
// and registered after the notice was handled would otherwise be missed.
func (h *Hub) recheckIfRevoked(s *session, seen uint64) {
	if h.revocations.Load() != seen {
		h.recheck(s)
	}
}
