package api

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

// TestEdgeErrorMapping covers what a test cannot provoke over a connection with this
// server's configuration (no read timeout is set, a connection error leaves no one to
// answer): each still maps to a 4xx.
func TestEdgeErrorMapping(t *testing.T) {
	t.Parallel()
	s := &Server{cfg: Config{BodyLimit: 1024}}
	var fctx fasthttp.RequestCtx
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{fasthttp.ErrTimeout, 408, "REQUEST_TIMEOUT"},
		{&net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, 408, "REQUEST_TIMEOUT"},
		{context.DeadlineExceeded, 408, "REQUEST_TIMEOUT"},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, 400, "BAD_REQUEST"},
		{fasthttp.ErrBodyTooLarge, 413, "PAYLOAD_TOO_LARGE"},
		{errors.New("cannot find http request method"), 400, "BAD_REQUEST"},
	} {
		e := s.edgeError(&fctx, c.err)
		require.Equal(t, c.status, e.Status, "%v", c.err)
		require.Equal(t, c.code, e.Code, "%v", c.err)
	}
}

// TestHeadConnFindsTheRequestLineEnd: a newline counts only among the last
// maxRequestHead bytes read, however the reads were cut.
func TestHeadConnFindsTheRequestLineEnd(t *testing.T) {
	t.Parallel()
	feed := func(chunks ...string) *headConn {
		a, b := net.Pipe()
		c := &headConn{Conn: a}
		go func() {
			for _, ch := range chunks {
				_, _ = b.Write([]byte(ch))
			}
			_ = b.Close()
		}()
		buf := make([]byte, 3*maxRequestHead)
		for {
			if _, err := c.Read(buf); err != nil {
				break
			}
		}
		_ = a.Close()
		return c
	}
	long := string(make([]byte, maxRequestHead)) // no newline
	require.False(t, feed("GET /"+long).newlineInHead(), "a request line longer than the buffer")
	require.False(t, feed("GET / HTTP/1.1\r\n", "Cookie: "+long).newlineInHead(),
		"the newline is older than the last maxRequestHead bytes")
	require.True(t, feed("GET / HTTP/1.1\r\nCookie: ", long[:maxRequestHead-100]).newlineInHead())
	require.True(t, feed("previous body\n", "GET /"+long[:maxRequestHead-10]+" HTTP/1.1\r\nX: y").newlineInHead())
	require.False(t, feed("GET /", "aaaa").newlineInHead(), "none read yet")
}

// TestRequestLineEndedWithoutHeadConn: on a connection that is no headConn, the excerpt
// of fasthttp's own error decides; this pins the error's form.
func TestRequestLineEndedWithoutHeadConn(t *testing.T) {
	t.Parallel()
	read := func(raw string) error {
		var h fasthttp.RequestHeader
		err := h.Read(bufio.NewReaderSize(strings.NewReader(raw), maxRequestHead))
		var small *fasthttp.ErrSmallBuffer
		require.ErrorAs(t, err, &small)
		return err
	}
	long := strings.Repeat("a", 2*maxRequestHead)
	require.False(t, requestLineEnded(nil, read("GET /"+long+" HTTP/1.1\r\n\r\n")))
	require.True(t, requestLineEnded(nil, read("GET / HTTP/1.1\r\nCookie: "+long+"\r\n\r\n")))
	require.True(t, requestLineEnded(nil, read("GET / HTTP/1.1\r\n"+strings.Repeat("X-A: b\r\n", 2000)+"\r\n")))
}
