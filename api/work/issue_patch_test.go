package work_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestIssuePatchAbsentOrNullChangesNothing(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	sprint := f.Sprint(t, "S1", "ACTIVE")
	l := f.Label(t, "keep")
	iss := f.Create(t, map[string]any{"title": "Full", "description": "d", "priority": "HIGH", "assigneeId": f.Member.ID,
		"storyPoints": 3, "dueDate": "2026-12-01", "sprintId": sprint, "labelIds": []string{l}})
	id := iss["id"].(string)

	for _, body := range []map[string]any{
		{},
		{"title": nil, "description": nil, "statusId": nil, "assigneeId": nil, "priority": nil, "storyPoints": nil, "type": nil,
			"dueDate": nil, "sprintId": nil, "labelIds": nil, "fixVersionIds": nil, "affectsVersionIds": nil,
			"clearAssignee": false, "clearStoryPoints": false, "clearDueDate": false, "clearSprint": false},
		{"title": "Full", "priority": "HIGH", "assigneeId": f.Member.ID, "labelIds": []string{l}, "unknownMember": 1},
	} {
		got := f.Patch(t, id, body)
		for _, k := range apitest.IssueResponseMembers {
			require.Equal(t, iss[k], got[k], "%s after %v", k, body)
		}
	}
	require.Empty(t, f.Activity(t, id))
}

func TestIssuePatchFieldsWriteActivity(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	s1, s2 := f.Sprint(t, "Sprint A", "PLANNED"), f.Sprint(t, "Sprint B", "ACTIVE")
	iss := f.Create(t, map[string]any{"title": "Old title"})
	id, key := iss["id"].(string), iss["key"].(string)
	time.Sleep(2 * time.Millisecond)

	m := f.Patch(t, key, map[string]any{"title": "New title", "description": "Words", "priority": "CRITICAL", "storyPoints": 8,
		"dueDate": "2027-01-31", "assigneeId": f.Member.ID, "sprintId": s1, "type": "BUG"})
	require.Equal(t, "New title", m["title"])
	require.Equal(t, "Words", m["description"])
	require.Equal(t, "CRITICAL", m["priority"])
	require.EqualValues(t, 8, m["storyPoints"])
	require.Equal(t, "2027-01-31", m["dueDate"])
	require.Equal(t, f.Member.ID.String(), m["assigneeId"])
	require.Equal(t, "Mia", m["assigneeName"])
	require.Equal(t, s1, m["sprintId"])
	require.Equal(t, "Sprint A", m["sprintName"])
	require.Equal(t, "BUG", m["type"])
	require.Greater(t, m["updatedAt"].(string), iss["updatedAt"].(string))
	require.Equal(t, iss["createdAt"], m["createdAt"])
	apitest.RequireIssueShape(t, m)
	require.Equal(t, []any{}, m["fixVersions"])
	require.ElementsMatch(t, []string{
		"TITLE_CHANGED:Old title→New title", "DESCRIPTION_CHANGED:∅→Words", "PRIORITY_CHANGED:MEDIUM→CRITICAL",
		"STORY_POINTS_CHANGED:∅→8", "DUE_DATE_CHANGED:∅→2027-01-31", "ASSIGNED:∅→Mia", "SPRINT_CHANGED:∅→Sprint A",
	}, f.Activity(t, id), "one entry per mapped field; type has none")

	m = f.Patch(t, id, map[string]any{"assigneeId": f.Owner.ID, "sprintId": s2, "storyPoints": 0})
	require.Equal(t, "Owner", m["assigneeName"])
	require.EqualValues(t, 0, m["storyPoints"])
	m = f.Patch(t, id, map[string]any{"clearAssignee": true, "clearStoryPoints": true, "clearDueDate": true, "clearSprint": true})
	for _, k := range []string{"assigneeId", "assigneeName", "storyPoints", "dueDate", "sprintId", "sprintName"} {
		require.Nil(t, m[k], k)
	}
	acts := f.Activity(t, id)[7:]
	require.ElementsMatch(t, []string{"ASSIGNED:Mia→Owner", "SPRINT_CHANGED:Sprint A→Sprint B", "STORY_POINTS_CHANGED:8→0",
		"UNASSIGNED:Owner→∅", "SPRINT_CHANGED:Sprint B→∅", "STORY_POINTS_CHANGED:0→∅", "DUE_DATE_CHANGED:2027-01-31→∅"}, acts)

	// A clear flag wins over a value sent with it; clearing what is empty is no change.
	m = f.Patch(t, id, map[string]any{"assigneeId": f.Member.ID, "clearAssignee": true, "clearSprint": true})
	require.Nil(t, m["assigneeId"])
	require.Len(t, f.Activity(t, id), 14)
	// The actor of every entry is the caller.
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM issue_activities WHERE issue_id = $1 AND actor_id <> $2", id, f.Owner.ID))
}

func TestIssuePatchSets(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	other := apitest.NewProject(t, apitest.Shared(t))
	a, b := f.Label(t, "a"), f.Label(t, "b")
	foreignLabel, foreignVersion := other.Label(t, "x"), other.Version(t, "x")
	v1, v2 := f.Version(t, "1.0"), f.Version(t, "2.0")
	iss := f.Create(t, map[string]any{"title": "Sets", "labelIds": []string{a}})
	id := iss["id"].(string)

	m := f.Patch(t, id, map[string]any{"labelIds": []string{b, a, foreignLabel}, "fixVersionIds": []string{v1, foreignVersion},
		"affectsVersionIds": []string{v1, v2}})
	require.Len(t, m["labels"], 2)
	require.Equal(t, []any{}, m["fixVersions"], "PATCH replies leave the version lists empty")
	got := f.Get(t, id)
	require.Equal(t, []any{map[string]any{"id": v1, "name": "1.0"}}, got["fixVersions"], "another project's version is dropped")
	require.Len(t, got["affectsVersions"], 2, "one version may be fix and affects at once")
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM issue_labels WHERE label_id = $1", foreignLabel))

	// Absent leaves a set alone; [] clears it; a new list replaces it.
	f.Patch(t, id, map[string]any{"affectsVersionIds": []string{}})
	got = f.Get(t, id)
	require.Len(t, got["labels"], 2)
	require.Len(t, got["fixVersions"], 1)
	require.Equal(t, []any{}, got["affectsVersions"])
	f.Patch(t, id, map[string]any{"labelIds": []string{b}, "fixVersionIds": []string{v2}})
	got = f.Get(t, id)
	require.Equal(t, "b", got["labels"].([]any)[0].(map[string]any)["name"])
	require.Len(t, got["labels"], 1)
	require.Equal(t, []any{map[string]any{"id": v2, "name": "2.0"}}, got["fixVersions"])
	require.Empty(t, f.Activity(t, id), "sets have no activity type")

	// Sending the current set again is no change.
	before := got["updatedAt"]
	require.Equal(t, before, f.Patch(t, id, map[string]any{"labelIds": []string{b}, "fixVersionIds": []string{v2}})["updatedAt"])

	// Deleting a version removes its assignments.
	require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.Path("/versions/"+v2), nil, f.Owner.Access).Status)
	require.Equal(t, []any{}, f.Get(t, id)["fixVersions"])
}

func TestIssuePatchRefusalsChangeNothing(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	other := apitest.NewProject(t, apitest.Shared(t))
	closed := f.Sprint(t, "Closed", "CLOSED")
	foreignSprint := other.Sprint(t, "Theirs", "PLANNED")
	iss := f.Create(t, map[string]any{"title": "Stable", "storyPoints": 2})
	id := iss["id"].(string)

	cases := []struct {
		body   any
		status int
		code   string
		reason string
	}{
		{`{"title":`, 400, "BAD_REQUEST", "MALFORMED_JSON"},
		{map[string]any{"title": "ok", "storyPoints": "three"}, 400, "BAD_REQUEST", "WRONG_TYPE"},
		{map[string]any{"title": " "}, 400, "VALIDATION_ERROR", ""},
		{map[string]any{"title": "ok", "description": "nul\x00"}, 400, "VALIDATION_ERROR", "NUL_CHARACTER"},
		{map[string]any{"title": "ok", "storyPoints": 2000}, 400, "VALIDATION_ERROR", ""},
		{map[string]any{"title": "ok", "dueDate": "2026-13-01"}, 400, "VALIDATION_ERROR", ""},
		{map[string]any{"title": "ok", "priority": "URGENT"}, 400, "BAD_REQUEST", "INVALID_ENUM"},
		{map[string]any{"title": "ok", "type": "SUBTASK"}, 400, "BAD_REQUEST", "SUBTASK_NEEDS_PARENT"},
		{map[string]any{"title": "ok", "statusId": "x"}, 400, "BAD_REQUEST", "INVALID_UUID"},
		{map[string]any{"title": "ok", "fixVersionIds": []string{"x"}}, 400, "BAD_REQUEST", "INVALID_UUID"},
		{map[string]any{"title": "ok", "clearSprint": "yes"}, 400, "BAD_REQUEST", "WRONG_TYPE"},
		{map[string]any{"title": "ok", "assigneeId": f.Outsider.ID}, 404, "NOT_FOUND", "ASSIGNEE_NOT_MEMBER"},
		{map[string]any{"title": "ok", "sprintId": foreignSprint}, 403, "FORBIDDEN", "SPRINT_NOT_IN_PROJECT"},
		{map[string]any{"title": "ok", "sprintId": closed}, 409, "CONFLICT", "SPRINT_STATE"},
		{map[string]any{"title": "ok", "statusId": other.Todo}, 403, "FORBIDDEN", "STATUS_NOT_IN_WORKFLOW"},
		{map[string]any{"title": "ok", "statusId": uuid.New()}, 403, "FORBIDDEN", "STATUS_NOT_IN_WORKFLOW"},
	}
	for _, tc := range cases {
		apitest.RequireProblem(t, f.H.Do("PATCH", f.Path("/issues/"+id), tc.body, f.Owner.Access), tc.status, tc.code, apitest.ReasonOrNone(tc.reason))
	}
	got := f.Get(t, id)
	for _, k := range apitest.IssueResponseMembers {
		require.Equal(t, iss[k], got[k], k)
	}
	require.Empty(t, f.Activity(t, id))
	apitest.RequireProblem(t, f.H.Do("PATCH", f.Path("/issues/"+uuid.NewString()), map[string]any{"title": "x"}, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
}

func TestIssuePatchStatusFollowsWorkflow(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	apitest.SetAuditLevel(t, f.H, "WRITE", true)
	iss := f.Create(t, map[string]any{"title": "Flow"})
	id := iss["id"].(string)
	jobs := func() int {
		return f.H.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'resourceId' = $1", id)
	}

	// Without transition rows every move is allowed.
	m := f.Patch(t, id, map[string]any{"statusId": f.Done})
	require.Equal(t, "Done", m["statusName"])
	require.Equal(t, "DONE", m["statusCategory"])
	m = f.Patch(t, id, map[string]any{"statusId": f.Todo})
	require.Equal(t, []string{"STATUS_CHANGED:To Do→Done", "STATUS_CHANGED:Done→To Do"}, f.Activity(t, id))

	// With transitions, only listed moves pass; guards see the issue after the change.
	var wf uuid.UUID
	require.NoError(t, f.H.DB.Pool.QueryRow(context.Background(), "SELECT workflow_id FROM projects WHERE id = $1", f.ProjectID).Scan(&wf))
	_, err := f.H.DB.Pool.Exec(context.Background(), `INSERT INTO workflow_transitions (workflow_id, from_status_id, to_status_id, guards) VALUES
		($1, $2, $3, '[{"type":"REQUIRED_FIELD","field":"assigneeId"}]'),
		($1, NULL, $4, '[{"type":"ROLE_RESTRICTION","roles":["ADMIN"]}]'),
		($1, $3, $2, NULL)`, wf, f.Todo, f.Prog, f.Done)
	require.NoError(t, err)
	before := jobs()

	r := f.H.Do("PATCH", f.Path("/issues/"+id), map[string]any{"statusId": f.Prog, "title": "Changed too"}, f.Owner.Access)
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("GUARD_FAILED"))
	require.Contains(t, r.JSON(t)["message"], "assigneeId")
	require.Equal(t, "Flow", f.Get(t, id)["title"], "the whole patch is refused")
	require.Len(t, f.Activity(t, id), 2)
	require.Equal(t, before, jobs(), "a refused change enqueues nothing")

	m = f.Patch(t, id, map[string]any{"statusId": f.Prog, "assigneeId": f.Member.ID})
	require.Equal(t, "In Progress", m["statusName"])
	require.Equal(t, "Mia", m["assigneeName"])

	// Role guard: only an ADMIN member may move to Done (from anywhere); the owner is one.
	r = f.H.Do("PATCH", f.Path("/issues/"+id), map[string]any{"statusId": f.Done}, f.Member.Access)
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("GUARD_FAILED"))
	require.Contains(t, r.JSON(t)["message"], "MEMBER")
	require.Equal(t, "Done", f.Patch(t, id, map[string]any{"statusId": f.Done})["statusName"])
	// No row leads from Done anywhere.
	apitest.RequireProblem(t, f.H.Do("PATCH", f.Path("/issues/"+id), map[string]any{"statusId": f.Prog}, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("TRANSITION_NOT_ALLOWED"))
	apitest.RequireProblem(t, f.H.Do("PATCH", f.Path("/issues/"+id), map[string]any{"statusId": f.Todo}, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("TRANSITION_NOT_ALLOWED"))
	require.Equal(t, "Done", f.Get(t, id)["statusName"])
	require.Equal(t, []string{"STATUS_CHANGED:To Do→Done", "STATUS_CHANGED:Done→To Do", "STATUS_CHANGED:To Do→In Progress",
		"ASSIGNED:∅→Mia", "STATUS_CHANGED:In Progress→Done"}, f.Activity(t, id))
	require.Equal(t, 4, f.H.Count("SELECT count(*) FROM river_job WHERE args->>'action' = 'ISSUE_TRANSITIONED' AND args->>'resourceId' = $1", id))
}

func TestIssueSLATimer(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	id := f.Create(t, map[string]any{"title": "Timed"})["id"].(string)
	sla := func(m map[string]any) string {
		if m["slaStartTime"] == nil {
			return ""
		}
		return m["slaStartTime"].(string)
	}

	started := sla(f.Patch(t, id, map[string]any{"statusId": f.Prog}))
	require.NotEmpty(t, started, "the first move into IN_PROGRESS starts the timer")
	require.Equal(t, started, sla(f.Patch(t, id, map[string]any{"statusId": f.Todo})), "TODO leaves it")
	require.Equal(t, started, sla(f.Patch(t, id, map[string]any{"statusId": f.Prog})), "IN_PROGRESS again keeps it")
	require.Empty(t, sla(f.Patch(t, id, map[string]any{"statusId": f.Done})), "DONE clears it")
	require.Empty(t, sla(f.Patch(t, id, map[string]any{"statusId": f.Todo})))
	restarted := sla(f.Patch(t, id, map[string]any{"statusId": f.Prog}))
	require.NotEmpty(t, restarted, "a reopened issue gets it again on its next move to IN_PROGRESS")
	require.Greater(t, restarted, started)
	// Other changes leave it alone.
	require.Equal(t, restarted, sla(f.Patch(t, id, map[string]any{"title": "Still timed"})))
}
