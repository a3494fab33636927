package stomp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/stomp"
	"github.com/taskweave/taskweave/api/stomp/stomptest"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/realtime"
)

// goodToken authenticates as a user who may read project OK only.
const goodToken = "good-token"

// setup serves a hub (tuned by cfg) on 127.0.0.1 with a fake authenticator: token
// goodToken is a user, anything else is refused. It returns the hub and the ws URL.
func setup(t *testing.T, cfg stomp.Config) (*stomp.Hub, string) {
	t.Helper()
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	user := &auth.Principal{UserID: uuid.New(), Email: "u@example.com", Method: auth.MethodJWT}
	cfg.Authenticate = func(_ context.Context, token string) (*auth.Principal, error) {
		if token != goodToken {
			return nil, fmt.Errorf("%w: bad token", auth.ErrUnauthenticated)
		}
		return user, nil
	}
	cfg.MayRead = func(_ context.Context, _ *auth.Principal, key string) (bool, error) {
		return key == "OK" || key == "SLOW" || key == "FAST", nil
	}
	hub := stomp.NewHub(cfg)
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/ws", hub.Handler())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() {
		hub.Close()
		_ = app.ShutdownWithTimeout(5 * time.Second)
	})
	return hub, "ws://" + ln.Addr().String() + "/ws"
}

func dial(t *testing.T, url string, protocols ...string) *stomptest.Client {
	t.Helper()
	c, err := stomptest.Dial(context.Background(), url, protocols...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func connected(t *testing.T, url, heartBeat string) *stomptest.Client {
	t.Helper()
	c := dial(t, url, "v12.stomp")
	_, err := c.Connect(goodToken, heartBeat)
	require.NoError(t, err)
	return c
}

// requireClosed reads until the server closes the connection, failing on any frame.
func requireClosed(t *testing.T, c *stomptest.Client) {
	t.Helper()
	f, err := c.Read(5 * time.Second)
	require.Error(t, err, "got %s %v instead of a close", f.Command, f.Headers)
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server did not close: %v", err)
}

// requireError reads an ERROR frame whose message contains want, then the close.
func requireError(t *testing.T, c *stomptest.Client, want string) stomp.Frame {
	t.Helper()
	f, err := c.Expect("ERROR", 5*time.Second)
	require.NoError(t, err)
	require.Contains(t, f.Value("message"), want)
	requireClosed(t, c)
	return f
}

func TestSubprotocolNegotiation(t *testing.T) {
	t.Parallel()
	_, url := setup(t, stomp.Config{})
	require.Equal(t, "v12.stomp", dial(t, url, "v11.stomp", "v12.stomp").Protocol, "1.2 is preferred")
	require.Equal(t, "v10.stomp", dial(t, url, "v10.stomp").Protocol)
	c := dial(t, url)
	require.Equal(t, "", c.Protocol, "a bare WebSocket is served too")
	f, err := c.Connect(goodToken, "")
	require.NoError(t, err)
	require.Equal(t, "1.2", f.Value("version"))
}

func TestConnectRules(t *testing.T) {
	t.Parallel()
	_, url := setup(t, stomp.Config{})

	t.Run("bad token", func(t *testing.T) {
		c := dial(t, url, "v12.stomp")
		require.NoError(t, c.Send(stomp.Frame{Command: "CONNECT", Headers: []stomp.Header{
			{Name: "accept-version", Value: "1.2"}, {Name: "Authorization", Value: "Bearer nope"}}}))
		requireError(t, c, "invalid or expired")
	})
	t.Run("missing token", func(t *testing.T) {
		c := dial(t, url, "v12.stomp")
		require.NoError(t, c.Send(stomp.Frame{Command: "CONNECT", Headers: []stomp.Header{{Name: "accept-version", Value: "1.2"}}}))
		requireError(t, c, "Authorization")
	})
	t.Run("not a bearer token", func(t *testing.T) {
		c := dial(t, url, "v12.stomp")
		require.NoError(t, c.Send(stomp.Frame{Command: "CONNECT", Headers: []stomp.Header{{Name: "Authorization", Value: goodToken}}}))
		requireError(t, c, "Authorization")
	})
	t.Run("frame before CONNECT", func(t *testing.T) {
		c := dial(t, url, "v12.stomp")
		require.NoError(t, c.Send(stomp.Frame{Command: "SUBSCRIBE", Headers: []stomp.Header{{Name: "id", Value: "0"}, {Name: "destination", Value: "/topic/projects/OK"}}}))
		requireError(t, c, "CONNECT expected")
	})
	t.Run("unsupported version", func(t *testing.T) {
		c := dial(t, url, "v12.stomp")
		require.NoError(t, c.Send(stomp.Frame{Command: "CONNECT", Headers: []stomp.Header{
			{Name: "accept-version", Value: "2.0"}, {Name: "Authorization", Value: "Bearer " + goodToken}}}))
		f := requireError(t, c, "versions")
		require.Equal(t, "1.2,1.1,1.0", f.Value("version"))
	})
	t.Run("STOMP command, lower-case header, 1.1", func(t *testing.T) {
		c := dial(t, url, "v11.stomp")
		require.NoError(t, c.Send(stomp.Frame{Command: "STOMP", Headers: []stomp.Header{
			{Name: "accept-version", Value: "1.0,1.1"}, {Name: "authorization", Value: "bearer " + goodToken}}}))
		f, err := c.Expect("CONNECTED", 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, "1.1", f.Value("version"))
		require.Equal(t, "0,0", f.Value("heart-beat"))
	})
	t.Run("silence before CONNECT", func(t *testing.T) {
		_, url := setup(t, stomp.Config{ConnectTimeout: 100 * time.Millisecond})
		requireClosed(t, dial(t, url, "v12.stomp"))
	})
}

func TestHeartBeatNegotiation(t *testing.T) {
	t.Parallel()
	_, url := setup(t, stomp.Config{HeartBeat: 50 * time.Millisecond})
	for _, tc := range []struct{ client, want string }{
		{"0,0", "0,0"},
		{"1000,20000", "20000,1000"}, // each direction: the larger of offer and wish
		{"10,10", "50,50"},
		{"0,30", "50,0"},
	} {
		c := dial(t, url, "v12.stomp")
		f, err := c.Connect(goodToken, tc.client)
		require.NoError(t, err)
		require.Equal(t, tc.want, f.Value("heart-beat"), "client %s", tc.client)
	}
	c := dial(t, url, "v12.stomp")
	require.NoError(t, c.Send(stomp.Frame{Command: "CONNECT", Headers: []stomp.Header{
		{Name: "heart-beat", Value: "x"}, {Name: "Authorization", Value: "Bearer " + goodToken}}}))
	requireError(t, c, "heart-beat")
}

func TestServerSendsHeartBeats(t *testing.T) {
	t.Parallel()
	_, url := setup(t, stomp.Config{HeartBeat: 40 * time.Millisecond})
	c := connected(t, url, "0,40")
	// No frame comes, but beats do: about one per 40 ms.
	_, err := c.Read(500 * time.Millisecond)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "want a read timeout, got %v", err)
	require.GreaterOrEqual(t, c.HeartBeats(), int64(4))
}

func TestSilentClientIsClosed(t *testing.T) {
	t.Parallel()
	_, url := setup(t, stomp.Config{HeartBeat: 50 * time.Millisecond})

	silent := connected(t, url, "50,0")
	start := time.Now()
	requireClosed(t, silent)
	require.Less(t, time.Since(start), 2*time.Second)

	// A client that beats stays: beats every 30 ms for twice as long as a silent one
	// may last, then a subscription's answer proves it. This server allows 500 ms of
	// silence, so a busy test machine's late tick does not look like a silent client.
	_, url = setup(t, stomp.Config{HeartBeat: 250 * time.Millisecond})
	alive := connected(t, url, "250,0")
	deadline := time.Now().Add(time.Second)
	tick := time.NewTicker(30 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		<-tick.C
		require.NoError(t, alive.SendRaw([]byte("\n")))
	}
	_, err := alive.Subscribe("0", "/topic/projects/OK")
	require.NoError(t, err)
}

func TestSessionFrames(t *testing.T) {
	t.Parallel()
	hub, url := setup(t, stomp.Config{MaxSubscriptions: 2, Limits: stomp.Limits{MaxFrame: 1024}})

	t.Run("subscribe, message, unsubscribe", func(t *testing.T) {
		c := connected(t, url, "")
		_, err := c.Subscribe("s-1", "/topic/projects/OK")
		require.NoError(t, err)
		body := json.RawMessage(`{"type":"ISSUE_MOVED","projectKey":"OK"}`)
		hub.Deliver(realtime.Message{Destination: realtime.ProjectTopic("OK"), Body: body})
		f, err := c.Expect("MESSAGE", 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, "/topic/projects/OK", f.Value("destination"))
		require.Equal(t, "s-1", f.Value("subscription"))
		require.Equal(t, "application/json", f.Value("content-type"))
		require.Equal(t, fmt.Sprint(len(body)), f.Value("content-length"))
		require.NotEmpty(t, f.Value("message-id"))
		require.JSONEq(t, string(body), string(f.Body))

		require.NoError(t, c.Send(stomp.Frame{Command: "UNSUBSCRIBE", Headers: []stomp.Header{{Name: "id", Value: "s-1"}, {Name: "receipt", Value: "r-unsub"}}}))
		_, err = c.Expect("RECEIPT", 5*time.Second)
		require.NoError(t, err)
		hub.Deliver(realtime.Message{Destination: realtime.ProjectTopic("OK"), Body: body})
		// The next frame is the receipt of a later SEND, not the message.
		require.NoError(t, c.Send(stomp.Frame{Command: "SEND", Headers: []stomp.Header{
			{Name: "destination", Value: "/app/board"}, {Name: "receipt", Value: "r-send"}}, Body: []byte("ignored")}))
		f, err = c.Expect("RECEIPT", 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, "r-send", f.Value("receipt-id"))
	})
	t.Run("user queue", func(t *testing.T) {
		c := connected(t, url, "")
		_, err := c.Subscribe("n", "/user/queue/notifications")
		require.NoError(t, err)
	})
	t.Run("no-op commands", func(t *testing.T) {
		c := connected(t, url, "")
		for _, cmd := range []string{"ACK", "NACK", "BEGIN", "COMMIT", "ABORT"} {
			require.NoError(t, c.Send(stomp.Frame{Command: cmd, Headers: []stomp.Header{{Name: "receipt", Value: cmd}}}))
			f, err := c.Expect("RECEIPT", 5*time.Second)
			require.NoError(t, err)
			require.Equal(t, cmd, f.Value("receipt-id"))
		}
	})
	t.Run("disconnect with receipt", func(t *testing.T) {
		c := connected(t, url, "")
		require.NoError(t, c.Send(stomp.Frame{Command: "DISCONNECT", Headers: []stomp.Header{{Name: "receipt", Value: "bye"}}}))
		f, err := c.Expect("RECEIPT", 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, "bye", f.Value("receipt-id"))
		requireClosed(t, c)
	})

	refusals := []struct {
		name  string
		frame stomp.Frame
		want  string
	}{
		{"non-member", stomp.Frame{Command: "SUBSCRIBE", Headers: []stomp.Header{{Name: "id", Value: "0"}, {Name: "destination", Value: "/topic/projects/OTHER"}, {Name: "receipt", Value: "r"}}}, "not a member"},
		{"malformed key", stomp.Frame{Command: "SUBSCRIBE", Headers: []stomp.Header{{Name: "id", Value: "0"}, {Name: "destination", Value: "/topic/projects/ok"}}}, "unknown destination"},
		{"unknown destination", stomp.Frame{Command: "SUBSCRIBE", Headers: []stomp.Header{{Name: "id", Value: "0"}, {Name: "destination", Value: "/topic/all"}}}, "unknown destination"},
		{"no id", stomp.Frame{Command: "SUBSCRIBE", Headers: []stomp.Header{{Name: "destination", Value: "/topic/projects/OK"}}}, "id header"},
		{"send to a topic", stomp.Frame{Command: "SEND", Headers: []stomp.Header{{Name: "destination", Value: "/topic/projects/OK"}}}, "/app/"},
		{"unknown command", stomp.Frame{Command: "PUBLISH"}, "unknown command"},
		{"second connect", stomp.Frame{Command: "CONNECT", Headers: []stomp.Header{{Name: "Authorization", Value: "Bearer " + goodToken}}}, "already connected"},
		{"oversized frame", stomp.Frame{Command: "SEND", Headers: []stomp.Header{{Name: "destination", Value: "/app/x"}}, Body: []byte(strings.Repeat("x", 2000))}, "larger than 1024"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			c := connected(t, url, "")
			require.NoError(t, c.Send(tc.frame))
			f := requireError(t, c, tc.want)
			require.Equal(t, tc.frame.Value("receipt"), f.Value("receipt-id"), "an ERROR answers the frame's receipt")
		})
	}
	t.Run("duplicate id and the subscription limit", func(t *testing.T) {
		c := connected(t, url, "")
		_, err := c.Subscribe("a", "/topic/projects/OK")
		require.NoError(t, err)
		_, err = c.Subscribe("a", "/topic/projects/OK")
		require.ErrorIs(t, err, stomptest.ErrUnexpected)
		requireClosed(t, c)

		c = connected(t, url, "")
		for _, id := range []string{"a", "b"} {
			_, err = c.Subscribe(id, "/topic/projects/OK")
			require.NoError(t, err)
		}
		_, err = c.Subscribe("c", "/topic/projects/OK")
		require.ErrorIs(t, err, stomptest.ErrUnexpected)
	})
}

func TestSlowClientIsDroppedOthersContinue(t *testing.T) {
	t.Parallel()
	// The fast client's 20 messages fit its queue whatever the scheduler does; the slow
	// client's 32 MB do not fit queue and socket buffers together.
	hub, url := setup(t, stomp.Config{SendQueue: 32})
	slow := connected(t, url, "")
	_, err := slow.Subscribe("s", "/topic/projects/SLOW")
	require.NoError(t, err)
	fast := connected(t, url, "")
	_, err = fast.Subscribe("f", "/topic/projects/FAST")
	require.NoError(t, err)
	require.Equal(t, 2, hub.Sessions())

	var (
		wg   sync.WaitGroup
		got  int
		ferr error
	)
	const fastMessages = 20
	wg.Add(1)
	go func() {
		defer wg.Done()
		for got < fastMessages {
			if _, ferr = fast.Expect("MESSAGE", 10*time.Second); ferr != nil {
				return
			}
			got++
		}
	}()
	// The slow client reads nothing while megabytes are sent to it; socket buffers
	// fill, then its queue, then it is dropped. The fast client gets all of its own.
	big := json.RawMessage(`"` + strings.Repeat("x", 16<<10) + `"`)
	small := json.RawMessage(`{"n":1}`)
	for i := 0; i < 2000; i++ {
		hub.Deliver(realtime.Message{Destination: realtime.ProjectTopic("SLOW"), Body: big})
		if i%100 == 0 {
			hub.Deliver(realtime.Message{Destination: realtime.ProjectTopic("FAST"), Body: small})
		}
	}
	wg.Wait()
	require.NoError(t, ferr)
	require.Equal(t, fastMessages, got)
	apitestEventually(t, func() bool { return hub.Sessions() == 1 }, "the slow session is dropped")

	// What the slow client finally reads is what made it through before the cut, then
	// the close (the ERROR only if its socket had room for it).
	for {
		f, err := slow.Read(10 * time.Second)
		if err != nil {
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "the slow client was not closed")
			break
		}
		require.Contains(t, []string{"MESSAGE", "ERROR"}, f.Command)
		if f.Command == "ERROR" {
			require.Contains(t, f.Value("message"), "slow consumer")
		}
	}
}

func TestHubCloseEndsSessions(t *testing.T) {
	t.Parallel()
	hub, url := setup(t, stomp.Config{})
	c := connected(t, url, "")
	require.Equal(t, 1, hub.Sessions())
	hub.Close()
	requireClosed(t, c)
	require.Equal(t, 0, hub.Sessions())
	// A closed hub refuses new sessions.
	d := dial(t, url, "v12.stomp")
	requireClosed(t, d)
}

// apitestEventually polls cond every 10 ms for up to 5 s.
func apitestEventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("not met within 5s: %s", msg)
}
