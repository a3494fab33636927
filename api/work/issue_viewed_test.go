package work_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestIssueViewedAtLevelAll: at audit level ALL a single-issue GET records ISSUE_VIEWED
// (the job is enqueued off the request, the worker writes the row); with the level off
// it records nothing. Lists do not record views.
func TestIssueViewedAtLevelAll(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	iss := f.Create(t, map[string]any{"title": "Watched"})
	id := iss["id"].(string)
	viewed := func() int {
		return h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'ISSUE_VIEWED' AND args->>'resourceId' = $1", id)
	}

	// Level ALL off (the default): the read records nothing.
	f.Get(t, iss["key"].(string))
	listKeys(f, t, f.Owner.Access, "")

	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE audit_config SET enabled = true WHERE level = 'ALL'")
	require.NoError(t, err)
	r := h.Do("GET", f.Path("/issues/"+iss["key"].(string)), nil, f.Viewer.Access, "User-Agent", "viewer-agent")
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.Equal(t, "Watched", r.JSON(t)["title"])
	apitest.Eventually(t, 10*time.Second, func() bool { return viewed() == 1 }, "ISSUE_VIEWED enqueued")
	require.Equal(t, 1, viewed(), "the read with the level off recorded nothing")
	listKeys(f, t, f.Owner.Access, "")

	h.StartWorkers()
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM audit_events WHERE action = 'ISSUE_VIEWED' AND resource_id = $1", id) == 1
	}, "ISSUE_VIEWED written")
	var level, resType, email, agent, project, details string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `SELECT level, resource_type, user_email, user_agent, project_id::text, details
		FROM audit_events WHERE action = 'ISSUE_VIEWED' AND resource_id = $1`, id).Scan(&level, &resType, &email, &agent, &project, &details))
	require.Equal(t, []string{"ALL", "ISSUE", f.Viewer.Email, "viewer-agent", f.ProjectID.String()}, []string{level, resType, email, agent, project})
	var d map[string]string
	require.NoError(t, json.Unmarshal([]byte(details), &d))
	require.Equal(t, map[string]string{"issueKey": iss["key"].(string), "projectKey": f.Key}, d)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM audit_events WHERE action = 'ISSUE_VIEWED' AND resource_id <> $1", id),
		"lists record no view")
}
