package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestStompRealClient drives the endpoint with @stomp/stompjs on Node, the library web
// clients use, not only with the Go client written here. scripts/node-deps.sh installs
// its packages; without them the test skips, unless TW_REQUIRE_NODE=1 (make test).
func TestStompRealClient(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("stomp", "testdata"))
	require.NoError(t, err)
	node, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "@stomp", "stompjs", "package.json"))
	if nodeErr != nil || modErr != nil {
		msg := "node or the client's packages are missing: run scripts/node-deps.sh"
		if os.Getenv("TW_REQUIRE_NODE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}

	f := apitest.NewProject(t, apitest.Shared(t))
	ws, _ := stompServe(t, f.H)
	id := f.Create(t, map[string]any{"title": "Seen by Node"})["id"].(string)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", ws+"/ws-stomp", f.Member.Access, f.Key)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func(prefix string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			require.True(t, ok, "client ended early; stderr: %s", stderr.String())
			require.True(t, strings.HasPrefix(l, prefix), "client printed %q, want %s…; stderr: %s", l, prefix, stderr.String())
			return strings.TrimPrefix(l, prefix)
		case <-ctx.Done():
			t.Fatalf("no %s line from the client; stderr: %s", prefix, stderr.String())
			return ""
		}
	}

	// stompjs offers 10 s heart-beats both ways; the server's 10 s make that the result.
	require.Equal(t, "1.2 10000,10000", next("READY "))
	f.Patch(t, id, map[string]any{"statusId": f.Prog})
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(next("MESSAGE ")), &m))
	require.Equal(t, map[string]any{"type": "ISSUE_MOVED", "issueId": id, "newStatusId": f.Prog.String(), "projectKey": f.Key}, m)
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
}
