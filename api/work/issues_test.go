package work_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestIssueCreateDefaults(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))

	m := f.Create(t, map[string]any{"title": "Login fails"})
	apitest.RequireIssueShape(t, m)
	require.Equal(t, f.Key+"-1", m["key"])
	require.Equal(t, "Login fails", m["title"])
	require.Equal(t, "TASK", m["type"])
	require.Equal(t, "MEDIUM", m["priority"])
	require.Equal(t, f.Todo.String(), m["statusId"])
	require.Equal(t, "To Do", m["statusName"])
	require.Equal(t, "TODO", m["statusCategory"])
	require.Equal(t, f.ProjectID.String(), m["projectId"])
	require.Equal(t, f.Key, m["projectKey"])
	require.Equal(t, f.Owner.ID.String(), m["reporterId"])
	require.Equal(t, "Owner", m["reporterName"])
	for _, k := range []string{"description", "storyPoints", "assigneeId", "assigneeName", "parentId", "dueDate", "sprintId", "sprintName", "slaStartTime"} {
		require.Nil(t, m[k], k)
	}
	for _, k := range []string{"refs", "labels", "fixVersions", "affectsVersions", "customFields"} {
		require.Equal(t, []any{}, m[k], k)
	}
	created, err := time.Parse(time.RFC3339Nano, m["createdAt"].(string))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(m["createdAt"].(string), "Z"))
	require.WithinDuration(t, time.Now(), created, time.Minute)

	require.Equal(t, f.Key+"-2", f.Create(t, map[string]any{"title": "Second"})["key"])
	require.Equal(t, 2, f.H.Count("SELECT issue_seq FROM projects WHERE id = $1", f.ProjectID))
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM issue_activities AS a JOIN issues AS i ON i.id = a.issue_id WHERE i.project_id = $1", f.ProjectID),
		"creation writes no activity (docs/api-conventions.md#issues)")
}

func TestIssueCreateAllMembers(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	lb, la := f.Label(t, "backend"), f.Label(t, "api")
	other := apitest.NewProject(t, apitest.Shared(t))
	foreign := other.Label(t, "foreign")
	sprint := f.Sprint(t, "Sprint 1", "PLANNED")
	parent := f.Create(t, map[string]any{"title": "Epic", "type": "EPIC"})

	m := f.Create(t, map[string]any{"title": "Child", "description": "Some text", "type": "STORY", "priority": "HIGH",
		"assigneeId": f.Member.ID, "parentId": parent["id"], "storyPoints": 5, "dueDate": "2026-12-01", "sprintId": sprint,
		"labelIds": []string{lb, la, foreign}, "customFieldValues": []map[string]any{{"fieldId": uuid.New(), "value": "x"}}})
	apitest.RequireIssueShape(t, m)
	require.Equal(t, "Some text", m["description"])
	require.Equal(t, "STORY", m["type"])
	require.Equal(t, "HIGH", m["priority"])
	require.Equal(t, f.Member.ID.String(), m["assigneeId"])
	require.Equal(t, "Mia", m["assigneeName"])
	require.Equal(t, parent["id"], m["parentId"])
	require.EqualValues(t, 5, m["storyPoints"])
	require.Equal(t, "2026-12-01", m["dueDate"])
	require.Equal(t, sprint, m["sprintId"])
	require.Equal(t, "Sprint 1", m["sprintName"])
	labels := m["labels"].([]any)
	require.Len(t, labels, 2, "the other project's label is dropped")
	require.Equal(t, map[string]any{"id": la, "name": "api", "color": "#112233"}, labels[0], "labels by name")
	require.Equal(t, "backend", labels[1].(map[string]any)["name"])

	// The reply is what a read returns.
	got := f.Get(t, m["key"].(string))
	for _, k := range apitest.IssueResponseMembers {
		if k != "fixVersions" && k != "affectsVersions" {
			require.Equal(t, m[k], got[k], k)
		}
	}

	// The owner counts as a member even without a row; a SUBTASK with a parent is fine.
	sub := f.Create(t, map[string]any{"title": "Sub", "type": "SUBTASK", "parentId": m["id"], "assigneeId": f.Owner.ID})
	require.Equal(t, "Owner", sub["assigneeName"])
	// A viewer is a member too.
	require.Equal(t, "Viv", f.Create(t, map[string]any{"title": "V", "assigneeId": f.Viewer.ID})["assigneeName"])
}

func TestIssueCreateRefusals(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	other := apitest.NewProject(t, apitest.Shared(t))
	foreignIssue := other.Create(t, map[string]any{"title": "Elsewhere"})
	foreignSprint := other.Sprint(t, "Theirs", "PLANNED")
	closed := f.Sprint(t, "Old", "CLOSED")
	long := strings.Repeat("x", 256)

	cases := []struct {
		name   string
		body   any
		status int
		code   string
		reason string
		field  string
	}{
		{"malformed json", `{"title": `, 400, "BAD_REQUEST", "MALFORMED_JSON", ""},
		{"not an object", `["title"]`, 400, "BAD_REQUEST", "MALFORMED_JSON", ""},
		{"missing title", map[string]any{"description": "x"}, 400, "BAD_REQUEST", "MISSING_FIELD", ""},
		{"null title", map[string]any{"title": nil}, 400, "BAD_REQUEST", "MISSING_FIELD", ""},
		{"title wrong type", map[string]any{"title": 5}, 400, "BAD_REQUEST", "WRONG_TYPE", ""},
		{"blank title", map[string]any{"title": "   "}, 400, "VALIDATION_ERROR", "", "title"},
		{"long title", map[string]any{"title": long}, 400, "VALIDATION_ERROR", "", "title"},
		{"NUL in title", map[string]any{"title": "a\x00b"}, 400, "VALIDATION_ERROR", "NUL_CHARACTER", ""},
		{"NUL in description", map[string]any{"title": "t", "description": "\x00"}, 400, "VALIDATION_ERROR", "NUL_CHARACTER", ""},
		{"negative points", map[string]any{"title": "t", "storyPoints": -1}, 400, "VALIDATION_ERROR", "", "storyPoints"},
		{"too many points", map[string]any{"title": "t", "storyPoints": 1001}, 400, "VALIDATION_ERROR", "", "storyPoints"},
		{"fractional points", map[string]any{"title": "t", "storyPoints": 1.5}, 400, "BAD_REQUEST", "WRONG_TYPE", ""},
		{"bad due date", map[string]any{"title": "t", "dueDate": "01.12.2026"}, 400, "VALIDATION_ERROR", "", "dueDate"},
		{"year zero", map[string]any{"title": "t", "dueDate": "0000-01-01"}, 400, "VALIDATION_ERROR", "", "dueDate"},
		{"no such day", map[string]any{"title": "t", "dueDate": "2026-02-30"}, 400, "VALIDATION_ERROR", "", "dueDate"},
		{"due date wrong type", map[string]any{"title": "t", "dueDate": 20261201}, 400, "BAD_REQUEST", "WRONG_TYPE", ""},
		{"label ids not a list", map[string]any{"title": "t", "labelIds": "x"}, 400, "BAD_REQUEST", "WRONG_TYPE", ""},
		{"huge story points", map[string]any{"title": "t", "storyPoints": 1e20}, 400, "BAD_REQUEST", "WRONG_TYPE", ""},
		{"unknown type", map[string]any{"title": "t", "type": "FEATURE"}, 400, "BAD_REQUEST", "INVALID_ENUM", ""},
		{"lower-case type", map[string]any{"title": "t", "type": "bug"}, 400, "BAD_REQUEST", "INVALID_ENUM", ""},
		{"unknown priority", map[string]any{"title": "t", "priority": "BLOCKER"}, 400, "BAD_REQUEST", "INVALID_ENUM", ""},
		{"bad assignee id", map[string]any{"title": "t", "assigneeId": "nope"}, 400, "BAD_REQUEST", "INVALID_UUID", ""},
		{"bad label id", map[string]any{"title": "t", "labelIds": []string{"nope"}}, 400, "BAD_REQUEST", "INVALID_UUID", ""},
		{"subtask without parent", map[string]any{"title": "t", "type": "SUBTASK"}, 400, "BAD_REQUEST", "SUBTASK_NEEDS_PARENT", ""},
		{"assignee not a member", map[string]any{"title": "t", "assigneeId": f.Outsider.ID}, 404, "NOT_FOUND", "ASSIGNEE_NOT_MEMBER", ""},
		{"unknown assignee", map[string]any{"title": "t", "assigneeId": uuid.New()}, 404, "NOT_FOUND", "ASSIGNEE_NOT_MEMBER", ""},
		{"parent of another project", map[string]any{"title": "t", "parentId": foreignIssue["id"]}, 404, "NOT_FOUND", "PARENT_NOT_FOUND", ""},
		{"unknown parent", map[string]any{"title": "t", "parentId": uuid.New()}, 404, "NOT_FOUND", "PARENT_NOT_FOUND", ""},
		{"sprint of another project", map[string]any{"title": "t", "sprintId": foreignSprint}, 403, "FORBIDDEN", "SPRINT_NOT_IN_PROJECT", ""},
		{"unknown sprint", map[string]any{"title": "t", "sprintId": uuid.New()}, 404, "NOT_FOUND", "SPRINT_NOT_FOUND", ""},
		{"closed sprint", map[string]any{"title": "t", "sprintId": closed}, 409, "CONFLICT", "SPRINT_STATE", ""},
	}
	for _, tc := range cases {
		r := f.H.Do("POST", f.Path("/issues"), tc.body, f.Owner.Access)
		apitest.RequireProblem(t, r, tc.status, tc.code, apitest.ReasonOrNone(tc.reason))
		if tc.field != "" {
			m := r.JSON(t)
			require.Contains(t, m["details"], tc.field, tc.name)
			require.Equal(t, tc.field, m["errors"].([]any)[0].(map[string]any)["field"], tc.name)
		}
	}
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM issues WHERE project_id = $1", f.ProjectID), "nothing was created")
	require.Equal(t, 0, f.H.Count("SELECT issue_seq FROM projects WHERE id = $1", f.ProjectID), "no number was used up")
	require.Equal(t, f.Key+"-1", f.Create(t, map[string]any{"title": "First"})["key"])

	// Messages are localized; codes are not.
	r := f.H.Do("POST", f.Path("/issues"), map[string]any{"title": "t", "type": "SUBTASK"}, f.Owner.Access, "Accept-Language", "de")
	require.Equal(t, "Eine Unteraufgabe braucht einen übergeordneten Vorgang.", r.JSON(t)["message"])
}

func TestIssueCreateWithoutDefaultStatus(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	_, err := f.H.DB.Pool.Exec(context.Background(), "UPDATE workflow_statuses SET category = 'IN_PROGRESS' WHERE id = $1", f.Todo)
	require.NoError(t, err)
	apitest.RequireProblem(t, f.H.Do("POST", f.Path("/issues"), map[string]any{"title": "t"}, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("NO_DEFAULT_STATUS"))
	require.Equal(t, 0, f.H.Count("SELECT issue_seq FROM projects WHERE id = $1", f.ProjectID))

	// The lowest-position TODO status is the default, whatever its name.
	_, err = f.H.DB.Pool.Exec(context.Background(), "UPDATE workflow_statuses SET category = 'TODO', position = 7 WHERE id = $1", f.Done)
	require.NoError(t, err)
	require.Equal(t, f.Done.String(), f.Create(t, map[string]any{"title": "t"})["statusId"])
}

func TestIssueRoles(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	iss := f.Create(t, map[string]any{"title": "Existing"})
	key := iss["key"].(string)
	body := map[string]any{"title": "x"}

	// Reads need any role, writes MEMBER or ADMIN; a non-member is 403 on both.
	for _, u := range []struct {
		name        string
		token       string
		read, write int
		reason      string
	}{
		{"owner", f.Owner.Access, 200, 0, ""},
		{"member", f.Member.Access, 200, 0, ""},
		{"viewer", f.Viewer.Access, 200, 403, ""},
		{"outsider", f.Outsider.Access, 403, 403, "NOT_A_MEMBER"},
	} {
		require.Equal(t, u.read, f.H.Do("GET", f.Path("/issues"), nil, u.token).Status, u.name)
		require.Equal(t, u.read, f.H.Do("GET", f.Path("/issues/"+key), nil, u.token).Status, u.name)
		require.Equal(t, u.read, f.H.Do("GET", f.Path("/versions"), nil, u.token).Status, u.name)
		if u.write != 0 {
			apitest.RequireProblem(t, f.H.Do("POST", f.Path("/issues"), body, u.token), u.write, "FORBIDDEN", apitest.ReasonOrNone(u.reason))
			apitest.RequireProblem(t, f.H.Do("PATCH", f.Path("/issues/"+key), body, u.token), u.write, "FORBIDDEN", apitest.ReasonOrNone(u.reason))
			apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/issues/"+key), nil, u.token), u.write, "FORBIDDEN", apitest.ReasonOrNone(u.reason))
			apitest.RequireProblem(t, f.H.Do("POST", f.Path("/versions"), map[string]any{"name": "v"}, u.token), u.write, "FORBIDDEN", apitest.ReasonOrNone(u.reason))
		}
	}
	require.Equal(t, http.StatusCreated, f.H.Do("POST", f.Path("/issues"), body, f.Member.Access).Status)
	require.Equal(t, http.StatusOK, f.H.Do("PATCH", f.Path("/issues/"+key), map[string]any{"title": "By member"}, f.Member.Access).Status)
	require.Equal(t, "By member", f.Get(t, key)["title"])

	// Unknown project 404; no credentials 401.
	apitest.RequireProblem(t, f.H.Do("GET", "/api/v1/projects/NOPE404/issues", nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("POST", "/api/v1/projects/NOPE404/issues", body, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
	require.Equal(t, http.StatusUnauthorized, f.H.Do("GET", f.Path("/issues"), nil, "").Status)
	require.Equal(t, 2, f.H.Count("SELECT count(*) FROM issues WHERE project_id = $1", f.ProjectID))
}

func TestIssueGet(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	iss := f.Create(t, map[string]any{"title": "Find me"})
	id, key := iss["id"].(string), iss["key"].(string)
	other := apitest.NewProject(t, apitest.Shared(t))
	foreign := other.Create(t, map[string]any{"title": "Not here"})

	require.Equal(t, id, f.Get(t, key)["id"])
	require.Equal(t, id, f.Get(t, id)["id"])
	require.Equal(t, id, f.Get(t, strings.ToLower(key))["id"], "keys are case-insensitive")

	// Another project's issue is unknown here, by key and by id.
	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues/"+foreign["key"].(string)), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues/"+foreign["id"].(string)), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues/"+f.Key+"-99"), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues/not_a-key!"), nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_ISSUE_REF"))
	apitest.RequireProblem(t, f.H.Do("PATCH", f.Path("/issues/12"), map[string]any{}, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_ISSUE_REF"))

	// The single GET fills labels and both version lists.
	l := f.Label(t, "ui")
	v1, v2 := f.Version(t, "1.0"), f.Version(t, "2.0")
	f.Patch(t, id, map[string]any{"labelIds": []string{l}, "fixVersionIds": []string{v2, v1}, "affectsVersionIds": []string{v1}})
	got := f.Get(t, key)
	apitest.RequireIssueShape(t, got)
	require.Equal(t, []any{map[string]any{"id": l, "name": "ui", "color": "#112233"}}, got["labels"])
	require.Equal(t, []any{map[string]any{"id": v1, "name": "1.0"}, map[string]any{"id": v2, "name": "2.0"}}, got["fixVersions"])
	require.Equal(t, []any{map[string]any{"id": v1, "name": "1.0"}}, got["affectsVersions"])
}

func TestIssueDelete(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	apitest.SetAuditLevel(t, f.H, "WRITE", true)
	epic := f.Create(t, map[string]any{"title": "Epic", "type": "EPIC"})
	story := f.Create(t, map[string]any{"title": "Story", "type": "STORY", "parentId": epic["id"]})
	sub1 := f.Create(t, map[string]any{"title": "Sub 1", "type": "SUBTASK", "parentId": epic["id"]})
	sub2 := f.Create(t, map[string]any{"title": "Sub 2", "type": "SUBTASK", "parentId": epic["id"]})
	unrelated := f.Create(t, map[string]any{"title": "Unrelated"})
	l := f.Label(t, "gone")
	v := f.Version(t, "9.9")
	f.Patch(t, epic["id"].(string), map[string]any{"title": "Epic!", "labelIds": []string{l}, "fixVersionIds": []string{v}})

	require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.Path("/issues/"+epic["key"].(string)), nil, f.Member.Access).Status)

	for _, gone := range []map[string]any{epic, sub1, sub2} {
		apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues/"+gone["id"].(string)), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
		require.Equal(t, 1, f.H.Count("SELECT count(*) FROM river_job WHERE args->>'action' = 'ISSUE_DELETED' AND args->>'resourceId' = $1",
			gone["id"]), "one ISSUE_DELETED per removed issue")
	}
	require.Nil(t, f.Get(t, story["id"].(string))["parentId"], "other children stay, without parent")
	require.Equal(t, unrelated["id"], f.Get(t, unrelated["key"].(string))["id"])
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM issue_labels WHERE issue_id = $1", epic["id"]))
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM issue_versions WHERE issue_id = $1", epic["id"]))
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM issue_activities WHERE issue_id = $1", epic["id"]))

	apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/issues/"+epic["id"].(string)), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	// Keys are never reused: the next issue gets the next number.
	require.Equal(t, f.Key+"-6", f.Create(t, map[string]any{"title": "After"})["key"])
}
