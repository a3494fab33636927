package apitest

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
)

// RawExchange writes raw on a new connection to addr and reads one response; the write
// runs beside the read, so a server that answers before reading everything (a body
// over the limit) does not block the test.
func RawExchange(t testing.TB, addr, raw string) (*http.Response, map[string]any) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	go func() { _, _ = io.WriteString(conn, raw) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "a reply, not a closed or silent connection")
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m), "the error body: %s", body)
	return resp, m
}

// ServeEdge serves h as the taskweave command does (api.Server.Listen: HeadListener) on
// its own 127.0.0.1 listener until the test ends, and returns its address.
func ServeEdge(t testing.TB, h *Harness) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = h.Server.App.Listener(api.HeadListener(ln)) }()
	t.Cleanup(func() { require.NoError(t, h.Server.App.ShutdownWithTimeout(5*time.Second)) })
	return ln.Addr().String()
}
