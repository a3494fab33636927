package api_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestEdgeErrorsUseTheErrorBody drives, over a real TCP connection, every way a request
// can fail before it reaches a handler: each gets a 4xx and the API's error body, never
// a 5xx or fasthttp's plain text.
func TestEdgeErrorsUseTheErrorBody(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	addr := apitest.ServeEdge(t, h)
	const login = "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
	big := 5<<20 + 1 // over the 4 MiB body limit
	for _, c := range []struct {
		name, raw    string
		status       int
		code, reason string
	}{
		{"request line over the buffer", "GET /api/v1/projects?q=" + strings.Repeat("a", 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414, "URI_TOO_LONG", ""},
		{"request line far over the buffer", "GET /" + strings.Repeat("a", 100_000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414, "URI_TOO_LONG", ""},
		{"one header over the buffer", "GET /api/v1/me HTTP/1.1\r\nHost: x\r\nCookie: " + strings.Repeat("c", 9000) + "\r\n\r\n", 431, "HEADERS_TOO_LARGE", ""},
		{"many headers over the buffer", "GET /api/v1/me HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-A: b\r\n", 1200) + "\r\n", 431, "HEADERS_TOO_LARGE", ""},
		{"long URI that fits, headers that do not", "GET /" + strings.Repeat("a", 6000) + " HTTP/1.1\r\nHost: x\r\nX-A: " + strings.Repeat("b", 3000) + "\r\n\r\n", 431, "HEADERS_TOO_LARGE", ""},
		{"no method", " /api/v1/me HTTP/1.1\r\nHost: x\r\n\r\n", 400, "BAD_REQUEST", "MALFORMED_REQUEST"},
		{"unknown HTTP version", "GET /api/v1/me HTTP/9\r\nHost: x\r\n\r\n", 400, "BAD_REQUEST", "MALFORMED_REQUEST"},
		{"HTTP/0.9 request line", "GET /api/v1/me\r\n\r\n", 400, "BAD_REQUEST", "MALFORMED_REQUEST"},
		{"TLS hello on the plain port", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400, "BAD_REQUEST", "MALFORMED_REQUEST"},
		{"header name with a space", "GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX A: b\r\n\r\n", 400, "BAD_REQUEST", "MALFORMED_REQUEST"},
		{"unknown method", "FOO /api/v1/me HTTP/1.1\r\nHost: x\r\n\r\n", 405, "METHOD_NOT_ALLOWED", ""},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 405, "METHOD_NOT_ALLOWED", ""},
		{"Content-Length not a number", login + "Content-Length: abc\r\n\r\n{}", 400, "BAD_REQUEST", "MALFORMED_REQUEST"},
		{"negative Content-Length", login + "Content-Length: -5\r\n\r\n{}", 400, "BAD_REQUEST", "MALFORMED_REQUEST"},
		{"two Content-Lengths", login + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400, "BAD_REQUEST", "MALFORMED_REQUEST"},
		{"bad chunk size", login + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400, "BAD_REQUEST", "*"},
		{"unknown Transfer-Encoding", login + "Transfer-Encoding: gzip\r\n\r\n{}", 400, "BAD_REQUEST", "MALFORMED_REQUEST"},
		{"chunked trailer over the buffer", login + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-T: " + strings.Repeat("t", 9000) + "\r\n\r\n", 400, "BAD_REQUEST", "*"},
		{"body over the limit", login + "Content-Length: " + strconv.Itoa(big) + "\r\n\r\n" + strings.Repeat(" ", big), 413, "PAYLOAD_TOO_LARGE", "BODY_TOO_LARGE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, m := apitest.RawExchange(t, addr, c.raw)
			require.Equal(t, c.status, resp.StatusCode)
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			require.Equal(t, c.code, m["code"])
			require.Equal(t, float64(c.status), m["status"])
			require.Equal(t, http.StatusText(c.status), m["title"])
			require.NotEmpty(t, m["message"])
			switch c.reason {
			case "*": // read by the body guard, which names no reason
			case "":
				require.NotContains(t, m, "reason")
			default:
				require.Equal(t, c.reason, m["reason"])
			}
		})
	}

	// The message follows Accept-Language like every other error's, when the header was read.
	resp, m := apitest.RawExchange(t, addr, "FOO /api/v1/me HTTP/1.1\r\nHost: x\r\nAccept-Language: de\r\nAccept: application/problem+json\r\n\r\n")
	require.Equal(t, 405, resp.StatusCode)
	require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
	require.Equal(t, "Diese Methode ist hier nicht erlaubt.", m["message"])

	// Just under the buffer still works.
	resp, m = apitest.RawExchange(t, addr, "GET /"+strings.Repeat("a", 8000)+" HTTP/1.1\r\nHost: x\r\n\r\n")
	require.Equal(t, 404, resp.StatusCode, "%v", m)
	require.Equal(t, "ROUTE_NOT_FOUND", m["reason"])
}
