package stomp

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/contrib/websocket"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/realtime"
)

// Client destinations a session accepts in SUBSCRIBE.
const (
	projectTopicPrefix = "/topic/projects/"
	notificationsQueue = "/user" + realtime.NotificationQueue
	tasksQueue         = "/user" + realtime.TaskQueue
)

// session is one WebSocket connection. The reader (serve's goroutine) handles the
// client's frames and is the only one to change principal, token and subs, under mu,
// which access checks (checkAccess, on their own goroutines) hold to read them; the
// writer goroutine owns every write to conn.
type session struct {
	hub  *Hub
	conn *websocket.Conn
	id   string

	// queue holds the frames waiting for the writer, at most hub.cfg.SendQueue, under
	// qmu; wake tells the writer there are some. A slice that is nil while the client
	// keeps up costs an idle connection nothing, where a buffered channel of
	// SendQueue frames would hold 6 KiB each (docs/performance.md#fan-out).
	qmu      sync.Mutex
	queue    [][]byte
	wake     chan struct{}      // capacity 1; never closed
	beat     chan time.Duration // the negotiated server heart-beat, set once after CONNECT
	ended    chan struct{}      // closed by end
	endOnce  sync.Once
	final    []byte // written last (ERROR or RECEIPT), may be nil
	drain    bool   // write the queued frames before final
	writerOK chan struct{}

	mu        sync.Mutex
	principal *auth.Principal
	// token is the CONNECT frame's credential, authenticated again by access checks.
	token   string
	version string
	// expect is the longest the client may stay silent once connected (2× its
	// negotiated heart-beat); 0 means no limit.
	expect time.Duration
	subs   map[string]subscription
}

// userID is the connected user, uuid.Nil before CONNECT.
func (s *session) userID() uuid.UUID {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.principal == nil {
		return uuid.Nil
	}
	return s.principal.UserID
}

// subscription is one SUBSCRIBE of a session.
type subscription struct {
	key  string // internal destination (realtime.Message.Destination)
	dest string // the destination the client named
}

// errClose ends the read loop after a frame that closes the connection.
var errClose = errors.New("stomp: session ends")

// serve runs one connection until it closes; the WebSocket must not be touched after
// it returns (the upgrader recycles it).
func (h *Hub) serve(conn *websocket.Conn) {
	s := &session{hub: h, conn: conn, id: strconv.FormatUint(h.sessionSeq.Add(1), 36),
		wake: make(chan struct{}, 1), beat: make(chan time.Duration, 1),
		ended: make(chan struct{}), writerOK: make(chan struct{}), subs: map[string]subscription{}}
	if !h.register(s) {
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(time.Second))
		return
	}
	defer h.unregister(s)
	go s.writeLoop()
	s.readLoop()
	s.end(nil, false)
	<-s.writerOK
}

// end asks the writer to finish: after the queued frames when drain is set, then final,
// then a close. The first call wins.
func (s *session) end(final []byte, drain bool) {
	s.endOnce.Do(func() {
		s.final, s.drain = final, drain
		close(s.ended)
	})
}

// enqueue hands a frame to the writer without blocking; a full queue drops the client.
func (s *session) enqueue(b []byte) {
	s.qmu.Lock()
	full := len(s.queue) >= s.hub.cfg.SendQueue
	if !full {
		s.queue = append(s.queue, b)
	}
	s.qmu.Unlock()
	if full {
		s.hub.cfg.Log.Warn("stomp client too slow, dropping it", "session", s.id)
		s.end(errorFrame("slow consumer: too many undelivered messages", "", s.version), false)
		// The writer is most likely stuck in a write to this client: cut that write
		// short so the session ends now, not after WriteTimeout. The ERROR is then only
		// sent if the client drains its socket within that second.
		_ = s.conn.UnderlyingConn().SetWriteDeadline(time.Now().Add(time.Second))
		return
	}
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is pending: the writer takes this frame with the others
	}
}

func (s *session) writeLoop() {
	defer close(s.writerOK)
	defer func() {
		// fasthttp closes a hijacked connection only when serve returns (Close is a
		// no-op before), so wake the reader with a past deadline; it checks ended
		// after setting its own, which therefore never overrides this one.
		s.end(nil, false)
		_ = s.conn.UnderlyingConn().SetReadDeadline(time.Now().Add(-time.Second))
	}()
	w := writer{s: s, timeout: s.hub.cfg.WriteTimeout, timer: time.NewTimer(time.Hour)}
	w.timer.Stop()
	for {
		// An end request wins over queued frames: a dropped client gets no more.
		select {
		case <-s.ended:
			w.finish()
			return
		default:
		}
		select {
		case <-s.wake:
			for _, b := range s.take() {
				// An end request wins over the rest of the batch too.
				select {
				case <-s.ended:
					w.finish()
					return
				default:
				}
				if !w.write(b) {
					return
				}
			}
		case w.every = <-s.beat:
			if w.every > 0 {
				w.timer.Reset(w.every)
			}
		case <-w.timer.C:
			if !w.write([]byte{'\n'}) {
				return
			}
		case <-s.ended:
			w.finish()
			return
		}
	}
}

// take hands the writer every queued frame, leaving the queue empty (and unallocated).
func (s *session) take() [][]byte {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

// writer is the state of a session's writer goroutine.
type writer struct {
	s       *session
	timeout time.Duration
	every   time.Duration // server heart-beat interval, 0 = none
	timer   *time.Timer   // fires when the connection has been idle for every
}

// write sends one WebSocket message; false when the connection is unusable.
func (w *writer) write(b []byte) bool {
	_ = w.s.conn.SetWriteDeadline(time.Now().Add(w.timeout))
	if err := w.s.conn.WriteMessage(websocket.TextMessage, b); err != nil {
		return false
	}
	if w.every > 0 {
		w.timer.Reset(w.every)
	}
	return true
}

// finish writes what end asked for: the queue when draining, the final frame, a close.
// A dropped client gets one short second for it.
func (w *writer) finish() {
	s := w.s
	if !s.drain {
		w.timeout = time.Second
	}
	if s.drain {
		for _, b := range s.take() {
			if !w.write(b) {
				return
			}
		}
	}
	if s.final != nil && !w.write(s.final) {
		return
	}
	_ = s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""),
		time.Now().Add(time.Second))
}

// readLoop handles frames until the client leaves, breaks the protocol or the session
// is ended.
func (s *session) readLoop() {
	cfg := s.hub.cfg
	dec := NewDecoder(cfg.Limits)
	// A WebSocket message may carry a few frames; a single frame is bounded by the decoder.
	s.conn.SetReadLimit(int64(2 * cfg.Limits.MaxFrame))
	deadline := time.Now().Add(cfg.ConnectTimeout)
	for {
		if s.principal != nil {
			deadline = time.Time{}
			if s.expect > 0 {
				deadline = time.Now().Add(s.expect)
			}
		}
		_ = s.conn.SetReadDeadline(deadline)
		select {
		case <-s.ended:
			return
		default:
		}
		_, data, err := s.conn.ReadMessage()
		if err != nil {
			return // gone, silent past its heart-beat, or closed by the writer
		}
		frames, err := dec.Feed(data)
		for i := range frames {
			if herr := s.handle(&frames[i]); herr != nil {
				return
			}
		}
		if err != nil {
			s.end(errorFrame(strings.TrimPrefix(err.Error(), ErrProtocol.Error()+": "), "", s.version), true)
			return
		}
	}
}

// handle processes one frame; errClose means the session ends.
func (s *session) handle(f *Frame) error {
	receipt := f.Value("receipt")
	if s.principal == nil {
		if f.Command != "CONNECT" && f.Command != "STOMP" {
			return s.fail("CONNECT expected, got "+f.Command, receipt)
		}
		return s.connect(f)
	}
	switch f.Command {
	case "SUBSCRIBE":
		if err := s.subscribe(f); err != nil {
			return err
		}
	case "UNSUBSCRIBE":
		id, ok := f.Get("id")
		if !ok {
			return s.fail("UNSUBSCRIBE needs an id header", receipt)
		}
		// An unknown id is not an error: a client may unsubscribe twice.
		if sub, ok := s.subs[id]; ok {
			s.mu.Lock()
			delete(s.subs, id)
			s.mu.Unlock()
			s.hub.unsubscribe(s, sub.key, id)
		}
	case "DISCONNECT":
		var final []byte
		if receipt != "" {
			final = receiptFrame(receipt)
		}
		s.end(final, true)
		return errClose
	case "SEND":
		// Clients have nothing to send: /app/** is accepted and ignored as the existing
		// web client expects; anything else would look like publishing to a topic.
		if !strings.HasPrefix(f.Value("destination"), "/app/") {
			return s.fail("SEND is only accepted to /app/** destinations", receipt)
		}
	case "ACK", "NACK", "BEGIN", "COMMIT", "ABORT":
		// Every subscription is ack:auto in effect and SENDs are ignored, so these
		// have nothing to act on; they are accepted so generic clients keep working.
	case "CONNECT", "STOMP":
		return s.fail("already connected", receipt)
	default:
		return s.fail("unknown command "+f.Command, receipt)
	}
	if receipt != "" {
		s.enqueue(receiptFrame(receipt))
	}
	return nil
}

// fail sends ERROR and closes after what is queued.
func (s *session) fail(message, receipt string) error {
	s.end(errorFrame(message, receipt, s.version), true)
	return errClose
}

// connect authenticates the client and negotiates version and heart-beats.
func (s *session) connect(f *Frame) error {
	cfg := s.hub.cfg
	receipt := f.Value("receipt")
	version, ok := negotiateVersion(f)
	if !ok {
		return s.fail("supported protocol versions are 1.2, 1.1, 1.0", receipt)
	}
	s.version = version
	cx, cy, ok := parseHeartBeat(f.Value("heart-beat"))
	if !ok {
		return s.fail("malformed heart-beat header", receipt)
	}
	token, ok := bearer(f)
	if !ok {
		return s.fail("CONNECT needs an Authorization header: Bearer <access token>", receipt)
	}
	seen := s.hub.revocations.Load()
	ctx, cancel := context.WithTimeout(s.hub.ctx, 10*time.Second)
	p, err := cfg.Authenticate(ctx, token)
	cancel()
	if err != nil {
		if errors.Is(err, auth.ErrTokenExpired) {
			// As the API's 401 does, the reason tells an expired token (refresh and
			// reconnect) from a bad or revoked one.
			s.end(errorFrame("invalid or expired access token", receipt, s.version, Header{"reason", "TOKEN_EXPIRED"}), true)
			return errClose
		}
		if errors.Is(err, auth.ErrUnauthenticated) {
			return s.fail("invalid or expired access token", receipt)
		}
		cfg.Log.Error("stomp authentication failed", "err", err)
		return s.fail("server error", receipt)
	}
	s.mu.Lock()
	s.principal, s.token = p, token
	s.mu.Unlock()
	s.hub.connected(s, p.UserID)
	s.hub.recheckIfRevoked(s, seen)

	// Heart-beats: each side uses the larger of what one offers and the other wants;
	// 0 on either side switches that direction off.
	ms := int(cfg.HeartBeat / time.Millisecond)
	send, expect := 0, 0
	if cy > 0 {
		send = max(ms, cy)
	}
	if cx > 0 {
		expect = max(cx, ms)
	}
	s.expect = 2 * time.Duration(expect) * time.Millisecond
	s.beat <- time.Duration(send) * time.Millisecond

	connected := Frame{Command: "CONNECTED", Headers: []Header{
		{"version", version}, {"heart-beat", strconv.Itoa(send) + "," + strconv.Itoa(expect)},
		{"server", "taskweave/1"}, {"session", s.id},
	}}
	s.enqueue(connected.Bytes())
	if receipt != "" {
		s.enqueue(receiptFrame(receipt))
	}
	return nil
}

// subscribe checks the destination and the caller's right to it, then subscribes.
func (s *session) subscribe(f *Frame) error {
	cfg := s.hub.cfg
	receipt := f.Value("receipt")
	id, ok := f.Get("id")
	if !ok || id == "" {
		return s.fail("SUBSCRIBE needs an id header", receipt)
	}
	dest := f.Value("destination")
	if _, dup := s.subs[id]; dup {
		return s.fail("subscription id "+id+" is already in use", receipt)
	}
	if len(s.subs) >= cfg.MaxSubscriptions {
		return s.fail("too many subscriptions", receipt)
	}
	var key string
	seen := s.hub.revocations.Load()
	switch {
	case strings.HasPrefix(dest, projectTopicPrefix):
		projectKey := strings.TrimPrefix(dest, projectTopicPrefix)
		if !project.KeyPattern.MatchString(projectKey) {
			return s.fail("unknown destination "+dest, receipt)
		}
		ctx, cancel := context.WithTimeout(s.hub.ctx, 10*time.Second)
		ok, err := cfg.MayRead(ctx, s.principal, projectKey)
		cancel()
		if err != nil {
			cfg.Log.Error("stomp membership check failed", "project", projectKey, "err", err)
			return s.fail("server error", receipt)
		}
		if !ok {
			return s.fail("not a member of project "+projectKey, receipt)
		}
		key = realtime.ProjectTopic(projectKey)
	case dest == notificationsQueue:
		key = realtime.UserDestination(s.principal.UserID, realtime.NotificationQueue)
	case dest == tasksQueue:
		key = realtime.UserDestination(s.principal.UserID, realtime.TaskQueue)
	default:
		return s.fail("unknown destination "+dest, receipt)
	}
	// The subscription counts once the process is LISTENing, so whatever commits after
	// the client holds its receipt reaches it.
	ctx, cancel := context.WithTimeout(s.hub.ctx, 5*time.Second)
	err := s.hub.waitReady(ctx)
	cancel()
	if err != nil {
		cfg.Log.Error("stomp subscription: live updates unavailable", "err", err)
		return s.fail("live updates are unavailable, try again later", receipt)
	}
	s.mu.Lock()
	s.subs[id] = subscription{key: key, dest: dest}
	s.mu.Unlock()
	s.hub.subscribe(s, key, id, dest)
	s.hub.recheckIfRevoked(s, seen)
	return nil
}

// checkAccess repeats, against the database, the checks CONNECT and SUBSCRIBE made:
// a session whose user may no longer connect (deactivated, deleted, tokens revoked) or
// no longer follow one of its project topics gets an ERROR frame naming what ended
// (with the subscription's id and destination) and is closed, as STOMP requires after
// an ERROR; a client that reconnects is checked afresh. A check that fails for another
// reason closes the session too: access is never assumed.
func (s *session) checkAccess() {
	cfg := s.hub.cfg
	s.mu.Lock()
	token, version := s.token, s.version
	ids := make([]string, 0, len(s.subs))
	subs := make(map[string]subscription, len(s.subs))
	for id, sub := range s.subs {
		ids = append(ids, id)
		subs[id] = sub
	}
	s.mu.Unlock()
	if token == "" {
		return // not connected: CONNECT checks what it needs
	}
	select {
	case <-s.ended:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(s.hub.ctx, 10*time.Second)
	defer cancel()
	p, err := cfg.Authenticate(ctx, token)
	if err != nil {
		if s.hub.ctx.Err() != nil {
			return // closing anyway
		}
		msg := "access ended: the account was deactivated or deleted, or its sign-in was revoked"
		if !errors.Is(err, auth.ErrUnauthenticated) {
			cfg.Log.Error("stomp access check failed", "session", s.id, "err", err)
			msg = "server error"
		}
		s.end(errorFrame(msg, "", version), false)
		return
	}
	slices.Sort(ids)
	allowed := map[string]bool{}
	for _, id := range ids {
		sub := subs[id]
		projectKey, ok := strings.CutPrefix(sub.key, projectTopicPrefix)
		if !ok {
			continue // the user's own queue: the account check covers it
		}
		may, known := allowed[projectKey]
		if !known {
			if may, err = cfg.MayRead(ctx, p, projectKey); err != nil {
				if s.hub.ctx.Err() != nil {
					return
				}
				cfg.Log.Error("stomp access check failed", "session", s.id, "project", projectKey, "err", err)
				s.end(errorFrame("server error", "", version), false)
				return
			}
			allowed[projectKey] = may
		}
		if !may {
			f := Frame{Command: "ERROR", Headers: []Header{
				{"message", "access to project " + projectKey + " ended"}, {"content-type", "text/plain"},
				{"subscription", id}, {"destination", sub.dest},
			}, Body: []byte("access to project " + projectKey + " ended")}
			s.end(f.Bytes(), false)
			return
		}
	}
}

// negotiateVersion picks the highest common version; no accept-version means 1.0.
func negotiateVersion(f *Frame) (string, bool) {
	accept, ok := f.Get("accept-version")
	if !ok {
		return "1.0", true
	}
	offered := map[string]bool{}
	for _, v := range strings.Split(accept, ",") {
		offered[strings.TrimSpace(v)] = true
	}
	for _, v := range []string{"1.2", "1.1", "1.0"} {
		if offered[v] {
			return v, true
		}
	}
	return "", false
}

// parseHeartBeat reads "cx,cy" in milliseconds; absent means 0,0.
func parseHeartBeat(v string) (cx, cy int, ok bool) {
	if v == "" {
		return 0, 0, true
	}
	a, b, found := strings.Cut(v, ",")
	if !found {
		return 0, 0, false
	}
	cx, err1 := strconv.Atoi(strings.TrimSpace(a))
	cy, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || cx < 0 || cy < 0 {
		return 0, 0, false
	}
	return cx, cy, true
}

// bearer finds the token of the Authorization header (any letter case, as clients
// differ), "Bearer " prefixed.
func bearer(f *Frame) (string, bool) {
	for _, h := range f.Headers {
		if !strings.EqualFold(h.Name, "authorization") {
			continue
		}
		v := strings.TrimSpace(h.Value)
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			if t := strings.TrimSpace(v[7:]); t != "" {
				return t, true
			}
		}
		return "", false
	}
	return "", false
}

func receiptFrame(id string) []byte {
	f := Frame{Command: "RECEIPT", Headers: []Header{{"receipt-id", id}}}
	return f.Bytes()
}

// errorFrame builds an ERROR frame; the message header says what went wrong, extra
// headers (a reason) follow it.
func errorFrame(message, receipt, version string, extra ...Header) []byte {
	f := Frame{Command: "ERROR", Headers: append([]Header{{"message", message}, {"content-type", "text/plain"}}, extra...)}
	if receipt != "" {
		f.Add("receipt-id", receipt)
	}
	if version == "" {
		// Before a version is agreed the client learns which ones we speak.
		f.Add("version", "1.2,1.1,1.0")
	}
	f.Body = []byte(message)
	return f.Bytes()
}
