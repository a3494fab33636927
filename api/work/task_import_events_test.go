package work_test

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestImportEmitsTheEventsOfACreate: every imported issue and comment reaches the
// consumers a create through the API reaches (webhooks, audit, activity, automation,
// notifications), the importer named as the actor; the notifications of the import to
// one user fold into one per type; a dry run emits nothing; undo publishes the deletes.
func TestImportEmitsTheEventsOfACreate(t *testing.T) {
	t.Parallel()
	h := apitest.WebhookHarness(t)
	f := apitest.NewProject(t, h)
	h.StartWorkers()
	_, err := h.DB.Pool.Exec(t.Context(), "UPDATE audit_config SET enabled = true WHERE level = 'WRITE'")
	require.NoError(t, err)
	recv := apitest.NewReceiver(t, h, nil)
	apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": recv.URL(),
		"events": []string{"issue.created", "comment.created", "issue.deleted"}})
	r := h.Do("POST", f.Path("/automation/rules"), map[string]any{"name": "Escalate new", "triggerType": "ISSUE_CREATED",
		"actions": []any{map[string]any{"type": "SET_PRIORITY", "params": map[string]any{"priority": "CRITICAL"}}}}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	file, err := os.ReadFile("testdata/import/jira.csv")
	require.NoError(t, err)
	mapping, _ := json.Marshal(map[string]string{"jdoe": f.Member.Email, "Jane Doe": f.Owner.Email})
	userMapping := apitest.Part{Name: "userMapping", Data: string(mapping)}

	// The jobs events queue (periodic jobs of the workers may come meanwhile).
	const sideJobs = "SELECT count(*) FROM river_job WHERE kind IN ('notify.event', 'audit.record', 'automation.evaluate')"
	before := h.Count(sideJobs)
	dry := taskWait(t, h, f.Owner, taskImport(t, f, f.Owner, "jira-csv", file, userMapping, apitest.Part{Name: "dryRun", Data: "true"}))
	require.Equal(t, "SUCCEEDED", dry["state"], "%v", dry)
	require.Zero(t, h.Count("SELECT count(*) FROM webhook_deliveries"), "a dry run emits nothing")
	require.Equal(t, before, h.Count(sideJobs), "a dry run queues no audit, notification or automation job")

	id := taskImport(t, f, f.Owner, "jira-csv", file, userMapping)
	m := taskWait(t, h, f.Owner, id)
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	// Three issues (the row without a summary is skipped), two comments on WEB-1.
	hits := recv.Wait(t, 5, 20*time.Second)
	events := map[string]int{}
	for _, hit := range hits {
		var body map[string]any
		require.NoError(t, json.Unmarshal(hit.Body, &body))
		events[body["event"].(string)]++
	}
	require.Equal(t, 3, events["issue.created"], "%v", events)
	require.Equal(t, 2, events["comment.created"], "%v", events)
	require.Equal(t, 3, h.Count(`SELECT count(*) FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
		WHERE w.project_id = $1 AND d.event_type = 'issue.created'`, f.ProjectID))

	apitest.Eventually(t, 20*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM audit_events WHERE project_id = $1 AND action = 'ISSUE_CREATED'", f.ProjectID) == 3
	}, "one ISSUE_CREATED audit row per imported issue")
	require.Equal(t, 3, h.Count(`SELECT count(*) FROM audit_events WHERE project_id = $1 AND action = 'ISSUE_CREATED'
		AND user_id = $2`, f.ProjectID, f.Owner.ID), "the importer is the actor")
	apitest.Eventually(t, 20*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM audit_events WHERE project_id = $1 AND action = 'COMMENT_CREATED'", f.ProjectID) >= 2
	}, "the imported comments are audited")
	require.Equal(t, 2, h.Count(`SELECT count(*) FROM issue_activities a JOIN issue_imports ii ON ii.issue_id = a.issue_id
		WHERE ii.task_id = $1 AND a.type = 'COMMENT'`, id), "one COMMENT activity entry per imported comment, by its author")
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM issue_activities a JOIN issue_imports ii ON ii.issue_id = a.issue_id
		WHERE ii.task_id = $1 AND a.type = 'COMMENT' AND a.actor_id = $2`, id, f.Member.ID))
	apitest.Eventually(t, 20*time.Second, func() bool {
		return h.Count(`SELECT count(*) FROM issues i JOIN issue_imports ii ON ii.issue_id = i.id
			WHERE ii.task_id = $1 AND i.priority = 'CRITICAL'`, id) == 3
	}, "the ISSUE_CREATED rule ran on every imported issue")

	// WEB-1 and WEB-3 are the member's, and WEB-1 has two comments: four notification
	// jobs of the task, which fold into one ISSUE_ASSIGNED and one COMMENT_ADDED.
	apitest.DrainJobs(t, h)
	require.Equal(t, 4, h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND args->>'taskId' = $1", id))
	types := map[string]int{}
	for _, n := range apitest.Notifications(t, h, f.Member) {
		types[n["type"].(string)]++
	}
	require.Equal(t, map[string]int{"ISSUE_ASSIGNED": 1, "COMMENT_ADDED": 1}, types)

	// Undo (of an import made to look cancelled) publishes one issue.deleted per issue.
	_, err = h.DB.Pool.Exec(t.Context(), "UPDATE tasks SET state = 'CANCELLED' WHERE id = $1", id)
	require.NoError(t, err)
	r = h.Do("POST", "/api/v1/tasks/"+id+"/undo", nil, f.Owner.Access)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	require.Equal(t, "SUCCEEDED", taskWait(t, h, f.Owner, r.JSON(t)["taskId"].(string))["state"])
	apitest.Eventually(t, 20*time.Second, func() bool {
		return h.Count(`SELECT count(*) FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
			WHERE w.project_id = $1 AND d.event_type = 'issue.deleted'`, f.ProjectID) == 3
	}, "one issue.deleted delivery per undone issue")
	require.Zero(t, h.Count(`SELECT count(*) FROM issue_activities a JOIN issues i ON i.id = a.issue_id WHERE i.project_id = $1`, f.ProjectID))
}

// TestImportedKeyOnIssueReplies: an imported issue's replies carry its original key as
// importedKey (null for an issue created here), on the single GET and on the list, and
// the list still reads a page in the same two statements however many issues are
// imported.
func TestImportedKeyOnIssueReplies(t *testing.T) {
	t.Parallel()
	h, counter := apitest.CountingHarness(t)
	f := apitest.NewProject(t, h)
	stop := taskWorkerClient(t, h)
	own := f.Create(t, map[string]any{"title": "Made here"})
	require.Contains(t, own, "importedKey")
	require.Nil(t, own["importedKey"])

	file, err := os.ReadFile("testdata/import/jira.csv")
	require.NoError(t, err)
	id := taskImport(t, f, f.Owner, "jira-csv", file)
	require.Equal(t, "SUCCEEDED", taskWait(t, h, f.Owner, id)["state"])
	stop(false) // its statements would be counted with the list's

	byTitle := map[string]map[string]any{}
	for _, x := range taskIssueList(t, f) {
		byTitle[x["title"].(string)] = x
	}
	require.Equal(t, "WEB-1", byTitle["Login fails on Safari"]["importedKey"], "the single GET")
	require.Equal(t, "WEB-3", byTitle["Fix typo"]["importedKey"])
	require.Nil(t, byTitle["Made here"]["importedKey"])

	before := counter.N.Load()
	r := h.Do("GET", f.Path("/issues?size=50"), nil, f.Member.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, int64(2), counter.N.Load()-before, "project access, then the page with its total, labels and original keys")
	keys := map[string]any{}
	for _, x := range r.JSON(t)["content"].([]any) {
		x := x.(map[string]any)
		keys[x["title"].(string)] = x["importedKey"]
	}
	require.Equal(t, map[string]any{"Made here": nil, "Login fails on Safari": "WEB-1", "Write release notes": "WEB-2",
		"Fix typo": "WEB-3"}, keys)
}
