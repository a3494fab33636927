package work_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/jobs"
)

func TestIssueEventsBecomeAuditJobs(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)

	// WRITE is off by default: the events cause no audit job.
	off := f.Create(t, map[string]any{"title": "Quiet"})
	f.Patch(t, off["id"].(string), map[string]any{"title": "Still quiet", "statusId": f.Prog})
	require.Empty(t, apitest.IssueAuditJobs(t, h, off["id"].(string)))

	apitest.SetAuditLevel(t, h, "WRITE", true)
	iss := f.Create(t, map[string]any{"title": "Loud"})
	id := iss["id"].(string)
	require.Equal(t, []string{"ISSUE_CREATED"}, apitest.IssueAuditJobs(t, h, id))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE args->>'resourceId' = $1 AND queue = $2", id, jobs.QueueAudit))

	// The job commits in the request's transaction: the issue row and the job row were
	// written by one transaction (same xmin).
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job AS j, issues AS i WHERE i.id = $1
		AND j.args->>'resourceId' = $1::text AND j.xmin = i.xmin`, id))

	f.Patch(t, id, map[string]any{"title": "Louder", "priority": "HIGH", "statusId": f.Prog, "labelIds": []string{f.Label(t, "x")}})
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM issues AS i WHERE i.id = $1
		AND (SELECT count(DISTINCT j.xmin::text) FROM river_job AS j WHERE j.args->>'resourceId' = $1::text AND j.xmin = i.xmin) = 1
		AND (SELECT count(*) FROM issue_activities AS a WHERE a.issue_id = i.id AND a.xmin = i.xmin) = 3`, id),
		"update, activity and jobs share one transaction")
	jobsNow := apitest.IssueAuditJobs(t, h, id)
	require.Equal(t, "ISSUE_CREATED", jobsNow[0])
	require.ElementsMatch(t, []string{"ISSUE_TRANSITIONED", "ISSUE_UPDATED", "ISSUE_UPDATED", "ISSUE_UPDATED"}, jobsNow[1:])

	// A refused change rolls back and leaves no job.
	_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO workflow_transitions (workflow_id, from_status_id, to_status_id)
		SELECT workflow_id, $2, $3 FROM projects WHERE id = $1`, f.ProjectID, f.Todo, f.Prog)
	require.NoError(t, err)
	apitest.RequireProblem(t, h.Do("PATCH", f.Path("/issues/"+id), map[string]any{"statusId": f.Done, "title": "Refused"}, f.Owner.Access),
		400, "BAD_REQUEST", apitest.Reason("TRANSITION_NOT_ALLOWED"))
	require.Len(t, apitest.IssueAuditJobs(t, h, id), 5)

	require.Equal(t, http.StatusNoContent, h.Do("DELETE", f.Path("/issues/"+id), nil, f.Member.Access, "User-Agent", "issue-test").Status)
	require.Equal(t, "ISSUE_DELETED", apitest.IssueAuditJobs(t, h, id)[5])

	// The worker writes the rows: level WRITE, resource ISSUE, the project, the actor.
	h.StartWorkers()
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM audit_events WHERE resource_id = $1", id) == 6
	}, "audit rows written")
	var (
		level, resType, email, agent, details string
		project, user                         string
	)
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `SELECT level, resource_type, user_email, coalesce(user_agent, ''),
		details, project_id::text, user_id::text FROM audit_events WHERE resource_id = $1 AND action = 'ISSUE_DELETED'`, id).
		Scan(&level, &resType, &email, &agent, &details, &project, &user))
	require.Equal(t, "WRITE", level)
	require.Equal(t, "ISSUE", resType)
	require.Equal(t, f.Member.Email, email)
	require.Equal(t, "issue-test", agent)
	require.Equal(t, f.ProjectID.String(), project)
	require.Equal(t, f.Member.ID.String(), user)
	var d map[string]any
	require.NoError(t, json.Unmarshal([]byte(details), &d))
	require.Equal(t, iss["key"], d["issueKey"])

	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `SELECT details FROM audit_events
		WHERE resource_id = $1 AND action = 'ISSUE_TRANSITIONED'`, id).Scan(&details))
	require.NoError(t, json.Unmarshal([]byte(details), &d))
	require.Equal(t, "To Do", d["oldStatus"])
	require.Equal(t, "In Progress", d["newStatus"])
}
