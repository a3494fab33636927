package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestTaskProgressPushedToCreator: the creator's /user/queue/tasks receives the task as
// GET shows it (without errors) up to its final state; another user's does not.
func TestTaskProgressPushedToCreator(t *testing.T) {
	t.Parallel()
	f := apitest.NotifyProject(t, nil)
	keys := make([]string, 3)
	for i := range keys {
		keys[i] = f.Create(t, map[string]any{"title": fmt.Sprintf("Issue %d", i)})["key"].(string)
	}
	bulk := func(u apitest.User, body map[string]any) string {
		r := f.H.Do("POST", f.Path("/issues/bulk"), body, u.Access)
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		return r.JSON(t)["taskId"].(string)
	}
	ws, _ := stompServe(t, f.H)
	cm, co := stompDial(t, ws, f.Member.Access), stompDial(t, ws, f.Owner.Access)
	_, err := cm.Subscribe("t", "/user/queue/tasks")
	require.NoError(t, err)
	_, err = co.Subscribe("t", "/user/queue/tasks")
	require.NoError(t, err)

	id := bulk(f.Member, map[string]any{"issueKeys": keys, "changes": map[string]any{"priority": "LOW"}})
	var last map[string]any
	for last == nil || last["state"] != "SUCCEEDED" {
		frame, m := stompMessage(t, cm)
		require.Equal(t, "/user/queue/tasks", frame.Value("destination"))
		require.Equal(t, id, m["id"])
		last = m
	}
	require.Equal(t, map[string]any{"done": 3.0, "total": 3.0, "failed": 0.0}, last["progress"])
	got := f.H.Do("GET", "/api/v1/tasks/"+id, nil, f.Member.Access).JSON(t)
	require.Equal(t, got, last, "the last push is the task as GET shows it")

	// The owner's own task is the first thing the owner's queue receives.
	own := bulk(f.Owner, map[string]any{"issueKeys": keys, "changes": map[string]any{"priority": "HIGH"}})
	_, m := stompMessage(t, co)
	require.Equal(t, own, m["id"], "the member's task never reached the owner")
}
