package api_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/api/stomp"
)

// TestConnectionTimeouts: a client that sends part of a request head and then nothing
// gets 408 REQUEST_TIMEOUT and a closed connection once HeadTimeout has passed; a body
// whose rest (after the first 8 KiB, which fasthttp reads with the head) trickles in
// over several HeadTimeouts is still read whole (it has its own idle limit, moved while
// bytes arrive); a keep-alive connection left idle longer than IdleTimeout is closed.
func TestConnectionTimeouts(t *testing.T) {
	t.Parallel()
	const head, idle = 300 * time.Millisecond, 800 * time.Millisecond
	h := apitest.New(t, apitest.Options{Configure: func(s *api.Settings) { s.HeadTimeout, s.IdleTimeout = head, idle }})
	addr := apitest.ServeEdge(t, h)
	dial := func() (net.Conn, *bufio.Reader) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close() })
		require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
		return conn, bufio.NewReader(conn)
	}

	t.Run("withheld head", func(t *testing.T) {
		// The server's deadline starts once it has accepted the connection, so the
		// clock starts before the dial: an early close cannot hide in the dial's time.
		start := time.Now()
		conn, r := dial()
		_, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.GreaterOrEqual(t, time.Since(start), head)
		require.Equal(t, http.StatusRequestTimeout, resp.StatusCode, "%s", body)
		var m map[string]any
		require.NoError(t, json.Unmarshal(body, &m), "%s", body)
		require.Equal(t, "REQUEST_TIMEOUT", m["code"])
		_, err = r.ReadByte()
		require.ErrorIs(t, err, io.EOF, "the connection is closed")
	})

	t.Run("slow body", func(t *testing.T) {
		conn, r := dial()
		// fasthttp reads a body's first 8 KiB with the head, under its deadline; the
		// rest trickles in, in four parts, over twice the head's timeout.
		body := `{"email":"nobody@example.com","password":"not the password"}` + strings.Repeat(" ", 24<<10)
		_, err := io.WriteString(conn, "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+
			"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body[:8<<10])
		require.NoError(t, err)
		start := time.Now()
		rest, part := body[8<<10:], (len(body)-8<<10)/4+1
		for i := 0; i < len(rest); i += part {
			time.Sleep(head / 2)
			_, err := io.WriteString(conn, rest[i:min(len(rest), i+part)])
			require.NoError(t, err)
		}
		resp, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		answer, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Greater(t, time.Since(start), head, "the body took longer than a head may")
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "the login was read and refused: %s", answer)
		var m map[string]any
		require.NoError(t, json.Unmarshal(answer, &m), "%s", answer)
		require.Equal(t, "INVALID_CREDENTIALS", m["reason"])
	})

	t.Run("STOMP outlives both", func(t *testing.T) {
		// An upgraded connection drops the HTTP deadlines: quiet for longer than
		// both, it still answers.
		u := h.Register("Stomp")
		c := stompDial(t, "ws://"+addr, u.Access)
		time.Sleep(idle + head)
		require.NoError(t, c.Send(stomp.Frame{Command: "UNSUBSCRIBE", Headers: []stomp.Header{{Name: "id", Value: "none"}, {Name: "receipt", Value: "r1"}}}))
		f, err := c.Expect("RECEIPT", 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, "r1", f.Value("receipt-id"))
	})

	t.Run("idle keep-alive", func(t *testing.T) {
		conn, r := dial()
		// The idle clock starts when the server has written its answer, which is
		// before the test reads it: start before the request, so a busy machine
		// cannot make an on-time close look early.
		start := time.Now()
		_, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		_, err = r.ReadByte()
		require.True(t, errors.Is(err, io.EOF) || isReset(err), "closed by the server, not by the test's deadline: %v", err)
		require.GreaterOrEqual(t, time.Since(start), idle)
	})
}

// isReset says whether err is a connection reset (a close with unread data).
func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}
