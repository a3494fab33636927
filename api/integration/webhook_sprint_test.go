package integration_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestWebhookSprintEvents: starting and completing a sprint send sprint.started and
// sprint.completed to subscribed webhooks, with the documented data
// (docs/api-conventions.md#events-and-webhooks), signed; a webhook subscribed to issue
// events only gets none of them.
func TestWebhookSprintEvents(t *testing.T) {
	t.Parallel()
	h := apitest.WebhookHarness(t)
	f := apitest.NewSprintProject(t, h)
	recv := apitest.NewReceiver(t, h, nil)
	_, secret := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": recv.URL(),
		"events": []string{"sprint.started", "sprint.completed"}})
	issuesOnly, _ := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.created"}})

	sp := f.NewSprint(t, map[string]any{"name": "Hooked"})
	id := sp["id"].(string)
	f.Start(t, id)
	r := f.Call("POST", id, "/complete", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	h.StartWorkers()
	hits := recv.Wait(t, 2, 15*time.Second)
	events := map[string]map[string]any{}
	for _, hit := range hits {
		apitest.VerifySignature(t, hit, secret)
		var body map[string]any
		require.NoError(t, json.Unmarshal(hit.Body, &body))
		require.Equal(t, body["event"], hit.Header.Get("X-Taskweave-Event"))
		require.Equal(t, f.Key, body["projectKey"])
		require.Equal(t, f.ProjectID.String(), body["projectId"])
		events[body["event"].(string)] = body["data"].(map[string]any)
	}
	want := map[string]any{"sprintId": id, "sprintName": "Hooked"}
	require.Equal(t, map[string]map[string]any{"sprint.started": want, "sprint.completed": want}, events)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1", issuesOnly["id"]))
}
