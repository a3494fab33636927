package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
)

// shutdownServe serves h on a 127.0.0.1 listener of its own (as the taskweave command
// does) and returns the address and a channel that gets Listen's result.
func shutdownServe(t *testing.T, h *apitest.Harness) (string, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- h.Server.App.Listener(api.HeadListener(ln)) }()
	return ln.Addr().String(), done
}

// connExchange writes raw on conn and reads one reply with its body.
func connExchange(t *testing.T, conn net.Conn, rd *bufio.Reader, raw string) (*http.Response, []byte) {
	t.Helper()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err := io.WriteString(conn, raw)
	require.NoError(t, err)
	resp, err := http.ReadResponse(rd, nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

// TestShutdownTellsKeepAliveClients: once a shutdown begins, /readyz answers 503 and
// every reply (on a connection opened before) says Connection: close and closes it, so
// a keep-alive client sends its next request on a new connection instead of losing it;
// after the drain the listener closes and Shutdown returns nil.
func TestShutdownTellsKeepAliveClients(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Keepalive")
	addr, served := shutdownServe(t, h)
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	rd := bufio.NewReader(conn)
	me := "GET /api/v1/auth/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + u.Access + "\r\n\r\n"
	resp, _ := connExchange(t, conn, rd, me)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.False(t, resp.Close, "kept alive before the shutdown")

	stopped := make(chan error, 1)
	go func() { stopped <- h.Server.Shutdown(1500*time.Millisecond, 5*time.Second) }()
	require.Eventually(t, h.Server.Draining, 5*time.Second, 5*time.Millisecond)

	resp, body := connExchange(t, conn, rd, me)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.True(t, resp.Close, "the reply during the drain says Connection: close")
	_, err = rd.ReadByte()
	require.ErrorIs(t, err, io.EOF, "and the server closes the connection after it")

	probe, err := net.Dial("tcp", addr)
	require.NoError(t, err, "the listener stays open during the drain")
	resp, body = connExchange(t, probe, bufio.NewReader(probe), "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
	probe.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
	require.True(t, resp.Close)

	select {
	case err := <-stopped:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return")
	}
	require.NoError(t, <-served)
	_, err = net.DialTimeout("tcp", addr, time.Second)
	require.Error(t, err, "the listener is closed after the drain")
}

// TestShutdownCutsSlowUploadCleanly: an upload still streaming when the shutdown's grace
// runs out is stopped: the client gets 503 SHUTTING_DOWN, no file (partial or whole)
// stays in the attachment directory, no record is written, and Shutdown returns nil
// (the process exits 0). While it streams, only a partial name exists.
func TestShutdownCutsSlowUploadCleanly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := apitest.New(t, apitest.Options{DB: apitest.Shared(t).DB, Configure: func(s *api.Settings) { s.AttachmentsDir = dir }})
	f := apitest.NewProject(t, h)
	ref := f.Create(t, map[string]any{"title": "Slow upload"})["key"].(string)
	addr, served := shutdownServe(t, h)

	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	const boundary = "slowboundary"
	head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n" +
		"Content-Type: application/octet-stream\r\n\r\n"
	const declared = 4 << 20
	_, err = io.WriteString(conn, "POST "+f.Path("/issues/"+ref+"/attachments")+" HTTP/1.1\r\nHost: x\r\n"+
		"Authorization: Bearer "+f.Member.Access+"\r\nContent-Type: multipart/form-data; boundary="+boundary+"\r\n"+
		"Content-Length: "+strconv.Itoa(declared)+"\r\n\r\n"+head)
	require.NoError(t, err)
	_, err = conn.Write(make([]byte, 256<<10))
	require.NoError(t, err)
	files := func() []string {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	require.Eventually(t, func() bool { return len(files()) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.True(t, strings.HasSuffix(files()[0], ".part") && strings.HasPrefix(files()[0], "."),
		"while it streams the file has a partial name: %v", files())

	start := time.Now()
	require.NoError(t, h.Server.Shutdown(0, 300*time.Millisecond), "a timed-out drain is a clean stop")
	require.Less(t, time.Since(start), 5*time.Second)

	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the client is answered")
	var problem map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&problem))
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%v", problem)
	require.Equal(t, "SHUTTING_DOWN", problem["reason"])
	require.True(t, resp.Close)
	require.Empty(t, files(), "no partial or whole file is left")
	var n int
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM attachments WHERE issue_id = (SELECT id FROM issues WHERE key = $1)", ref).Scan(&n))
	require.Zero(t, n)
	require.NoError(t, <-served)
}
