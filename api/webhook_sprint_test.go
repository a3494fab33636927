package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWebhookSprintEvents: starting and completing a sprint send sprint.started and
// sprint.completed to subscribed webhooks, with the documented data
// (docs/api-conventions.md#events-and-webhooks), signed; a webhook subscribed to issue
// events only gets none of them.
func TestWebhookSprintEvents(t *testing.T) {
	t.Parallel()
	h := whHarness(t)
	f := &sprintFixture{issueFixtureOn(t, h)}
	recv := whNewReceiver(t, h, nil)
	_, secret := whCreate(t, h, f.key, f.owner.Access, map[string]any{"url": recv.url(),
		"events": []string{"sprint.started", "sprint.completed"}})
	issuesOnly, _ := whCreate(t, h, f.key, f.owner.Access, map[string]any{"url": whPublicURL, "events": []string{"issue.created"}})

	sp := f.newSprint(t, map[string]any{"name": "Hooked"})
	id := sp["id"].(string)
	f.start(t, id)
	r := f.call("POST", id, "/complete", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	h.StartWorkers()
	hits := recv.wait(t, 2, 15*time.Second)
	events := map[string]map[string]any{}
	for _, hit := range hits {
		whVerify(t, hit, secret)
		var body map[string]any
		require.NoError(t, json.Unmarshal(hit.body, &body))
		require.Equal(t, body["event"], hit.header.Get("X-Taskweave-Event"))
		require.Equal(t, f.key, body["projectKey"])
		require.Equal(t, f.projectID.String(), body["projectId"])
		events[body["event"].(string)] = body["data"].(map[string]any)
	}
	want := map[string]any{"sprintId": id, "sprintName": "Hooked"}
	require.Equal(t, map[string]map[string]any{"sprint.started": want, "sprint.completed": want}, events)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1", issuesOnly["id"]))
}
