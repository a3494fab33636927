package core

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Request bodies arrive as a stream (fiber's StreamRequestBody, see New) so an upload
// never sits whole in memory. These bound what the stream may cost.
const (
	// bodyIdleTimeout ends a request whose client sends nothing for this long while its
	// body is read. The request deadline (RequestTimeout) does not apply while an upload
	// streams in: a large file on a slow link takes minutes.
	bodyIdleTimeout = time.Minute
	// bodyDrainMax is how much of an unread body is read away after the answer is
	// decided, so the client gets to see it (closing with unread data makes the kernel
	// reset the connection, which can destroy the answer in flight); with more left the
	// connection is closed instead.
	bodyDrainMax = 8 << 20
	// bodyDrainTimeout bounds that draining.
	bodyDrainTimeout = 5 * time.Second
)

const streamBodyKey = "StreamBody"

// BodyGuard makes request bodies what they were before streaming was switched on: every
// body but a streamed route's is read into memory here, up to limit, so handlers keep
// using c.Body(). A body over the limit (by Content-Length, or once a chunked one passes
// it) is 413 PAYLOAD_TOO_LARGE and never buffered. A route streamed says is given the
// stream (RequestBody). Either way the connection is settled after the answer.
func BodyGuard(limit int, streamed func(c *fiber.Ctx) bool) fiber.Handler {
	return func(c *fiber.Ctx) error { return bodyGuard(c, limit, streamed) }
}

func bodyGuard(c *fiber.Ctx, limit int, streamed func(c *fiber.Ctx) bool) error {
	if c.Context().RequestBodyStream() == nil {
		return c.Next()
	}
	body := newStreamBody(c)
	defer body.settle(c)
	if streamed(c) {
		c.Locals(streamBodyKey, body)
		return c.Next()
	}
	tooLarge := func() error {
		return NewError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "BODY_TOO_LARGE", "limit", strconv.Itoa(limit))
	}
	req := c.Request()
	switch n := req.Header.ContentLength(); {
	case n > limit:
		return tooLarge()
	case n >= 0:
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return BadRequest("")
		}
		body.err = io.EOF // read whole; SetBodyRaw releases the stream
		req.SetBodyRaw(buf)
	default: // chunked: the length is known once the body has been read
		buf, err := io.ReadAll(io.LimitReader(body, int64(limit)+1))
		if err != nil {
			return BadRequest("")
		}
		if len(buf) > limit {
			return tooLarge()
		}
		req.SetBodyRaw(buf)
	}
	return c.Next()
}

// StreamBody is the request body stream (RequestBody). It keeps the connection's read deadline moving
// while bytes arrive (bodyIdleTimeout) and remembers the end of the stream or its first
// error, because fasthttp's chunked stream would read into the next request after its end.
type StreamBody struct {
	r       io.Reader
	conn    net.Conn
	idle    time.Duration
	lastSet time.Time
	// deadline is set when a read deadline was put on conn and must be cleared after.
	deadline bool
	err      error
	// interrupted is set by Interrupt: the read in progress ends now and no other starts.
	interrupted atomic.Bool
}

// errBodyInterrupted ends a body whose reading was interrupted (a shutdown's grace ran
// out while it streamed).
var errBodyInterrupted = errors.New("request body: reading interrupted")

// Interrupt ends the body's reading at once, even a read blocked on a silent client:
// the connection's read deadline is moved to now.
func (b *StreamBody) Interrupt() {
	b.interrupted.Store(true)
	if b.conn != nil {
		_ = b.conn.SetReadDeadline(time.Now())
	}
}

func newStreamBody(c *fiber.Ctx) *StreamBody {
	b := &StreamBody{conn: c.Context().Conn(), idle: bodyIdleTimeout}
	if stream := c.Context().RequestBodyStream(); stream != nil {
		b.r = stream
	} else {
		// No stream: no body, or one bodyGuard has buffered already.
		b.r = bytes.NewReader(c.Request().Body())
	}
	return b
}

func (b *StreamBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.interrupted.Load() {
		b.err = errBodyInterrupted
		return 0, b.err
	}
	// Setting a deadline costs little, but not per 4 KiB read: once a second is enough.
	if now := time.Now(); b.conn != nil && b.idle > 0 && now.Sub(b.lastSet) > time.Second {
		_ = b.conn.SetReadDeadline(now.Add(b.idle))
		b.lastSet, b.deadline = now, true
		if b.interrupted.Load() { // Interrupt ran between the check above and here
			_ = b.conn.SetReadDeadline(now)
		}
	}
	n, err := b.r.Read(p)
	if err != nil {
		b.err = err
	}
	return n, err
}

// settle runs once the answer is decided. A body read to its end leaves the connection
// as it is; the rest of an unread one is drained (up to bodyDrainMax within
// bodyDrainTimeout), else the connection closes so its unread bytes are never taken for
// the next request.
func (b *StreamBody) settle(c *fiber.Ctx) {
	defer func() {
		if b.deadline {
			_ = b.conn.SetReadDeadline(time.Time{})
		}
	}()
	// No stream left: the body was read whole and handed over (c.Body(), SetBodyRaw),
	// which also released the stream b.r points to.
	if errors.Is(b.err, io.EOF) || c.Response().ConnectionClose() || c.Context().RequestBodyStream() == nil {
		return
	}
	if b.err == nil {
		b.idle = 0
		if b.conn != nil {
			_ = b.conn.SetReadDeadline(time.Now().Add(bodyDrainTimeout))
			b.deadline = true
		}
		_, _ = io.CopyN(io.Discard, b, bodyDrainMax)
		if errors.Is(b.err, io.EOF) {
			return
		}
	}
	c.Context().SetConnectionClose()
}

// RequestBody is the body of a streamed route (BodyGuard's streamed) as a stream; the
// caller reads it at most once.
func RequestBody(c *fiber.Ctx) *StreamBody {
	if body, _ := c.Locals(streamBodyKey).(*StreamBody); body != nil {
		return body
	}
	return newStreamBody(c)
}

// ErrShuttingDown answers a request cut off by the end of the shutdown's grace.
var ErrShuttingDown = NewError(http.StatusServiceUnavailable, "UNAVAILABLE", "SHUTTING_DOWN")
