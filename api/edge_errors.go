package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/taskweave/taskweave/api/core"
)

// maxRequestHead is fasthttp's read buffer: the request line and the headers together
// must fit in it. A longer request line is 414, longer headers 431 (serverError).
const maxRequestHead = 8 << 10

// Errors fasthttp meets before a request reaches the router.
var (
	errURITooLong      = core.NewError(http.StatusRequestURITooLong, "URI_TOO_LONG", "")
	errHeadersTooLarge = core.NewError(http.StatusRequestHeaderFieldsTooLarge, "HEADERS_TOO_LARGE", "")
	errMalformed       = core.BadRequest("MALFORMED_REQUEST")
	errReadTimeout     = core.NewError(http.StatusRequestTimeout, "REQUEST_TIMEOUT", "")
	errUnknownMethod   = core.NewError(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "")
)

// guardServer makes the answers fasthttp and Fiber give on their own carry the error
// body (docs/api-conventions.md#errors) and a 4xx status: a request fasthttp cannot read
// (serverError), and a method Fiber does not know, which it would answer with a
// plain-text 400.
func (s *Server) guardServer() {
	srv := s.App.Server()
	srv.ErrorHandler = s.serverError
	route := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		if !slices.Contains(fiber.DefaultMethods, string(fctx.Method())) {
			s.writeEdgeError(fctx, errUnknownMethod)
			return
		}
		route(fctx)
	}
}

// serverError is fasthttp's ErrorHandler: it answers a request fasthttp could not read.
func (s *Server) serverError(fctx *fasthttp.RequestCtx, err error) {
	s.writeEdgeError(fctx, s.edgeError(fctx, err))
}

// edgeError maps what fasthttp reports to the reply: a request head over the buffer is
// 414 when its request line did not fit, else 431; a declared body over the limit 413;
// a read that timed out 408; anything else (a malformed request line, header or body
// framing, a connection error mid-request) 400. Never a 5xx: none of these is the
// server's fault.
func (s *Server) edgeError(fctx *fasthttp.RequestCtx, err error) *core.Error {
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	switch {
	case errors.As(err, &small):
		if requestLineEnded(fctx.Conn(), err) {
			return errHeadersTooLarge
		}
		return errURITooLong
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return core.NewError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "BODY_TOO_LARGE", "limit", strconv.Itoa(s.cfg.BodyLimit))
	case errors.Is(err, fasthttp.ErrTimeout), errors.As(err, &netErr) && netErr.Timeout():
		return errReadTimeout
	default:
		return errMalformed
	}
}

// requestLineEnded reports whether the request head that overflowed fasthttp's buffer
// had its request line complete. fasthttp forgets the partial parse, but its buffer held
// exactly the last maxRequestHead bytes read from the connection, all of them the head:
// on a headConn (Listen) a newline among them says the line ended. Elsewhere (in-process
// tests) the error's excerpt of the buffer is the evidence: a newline in it.
func requestLineEnded(conn net.Conn, err error) bool {
	if hc, ok := conn.(*headConn); ok {
		return hc.newlineInHead()
	}
	return strings.Contains(err.Error(), `\n`) // %q-quoted excerpt
}

// Listen serves the API on addr (TCP, as Fiber's Listen) through headConn connections.
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen(s.App.Config().Network, addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return s.App.Listener(HeadListener(ln))
}

// HeadListener wraps ln so that each connection notes where the last newline it read
// was (headConn), which is how an overflowing request head is told apart.
func HeadListener(ln net.Listener) net.Listener { return headListener{ln} }

type headListener struct{ net.Listener }

func (l headListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &headConn{Conn: c}, nil
}

// headConn remembers the offset of the last newline among the last maxRequestHead
// bytes of each read; only fasthttp's goroutine, or after a WebSocket upgrade its
// session's reader, reads.
type headConn struct {
	net.Conn
	read   int64 // bytes read so far
	lastNL int64 // offset of the last newline seen
	seenNL bool
}

func (c *headConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		tail := p[:n]
		if len(tail) > maxRequestHead {
			tail = tail[len(tail)-maxRequestHead:]
		}
		if i := bytes.LastIndexByte(tail, '\n'); i >= 0 {
			c.lastNL, c.seenNL = c.read+int64(n-len(tail)+i), true
		}
		c.read += int64(n)
	}
	return n, err
}

// ReadFrom keeps the connection's own ReadFrom (sendfile) for response bodies.
func (c *headConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// newlineInHead: a newline among the last maxRequestHead bytes read.
func (c *headConn) newlineInHead() bool {
	return c.seenNL && c.lastNL >= c.read-maxRequestHead
}

// writeEdgeError writes e on a request that never reached the middleware chain.
func (s *Server) writeEdgeError(fctx *fasthttp.RequestCtx, e *core.Error) {
	c := s.App.AcquireCtx(fctx)
	defer s.App.ReleaseCtx(c)
	secureHeaders(c)
	s.env.Errors.Write(c, s.failures, e)
}

// secureHeaders are on every reply: no content sniffing, and no caching (replies carry
// credentials and private data). A handler that needs otherwise sets its own after
// (attachment downloads: private, no-cache; River UI's hashed assets: immutable).
func secureHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderCacheControl, "no-store")
}
