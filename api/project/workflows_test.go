package project_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/samber/lo"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/workflow"
)

// workflowFixture is a project made by POST /projects (so with the default workflow
// that creates) and one user per role, added through the member endpoint.
type workflowFixture struct {
	h          *apitest.Harness
	key        string
	base       string // /api/v1/projects/{key}/workflow
	projectID  uuid.UUID
	workflowID uuid.UUID
	// owner is the project owner (implicit ADMIN); admin, member and viewer have member
	// rows; outsider has none.
	owner, admin, member, viewer, outsider apitest.User
	todo, prog, done                       uuid.UUID
}

func workflowFixtureNew(t *testing.T) *workflowFixture {
	t.Helper()
	h := apitest.Shared(t)
	f := &workflowFixture{h: h, owner: h.Register("Owner"), admin: h.Register("Admin"), member: h.Register("Member"),
		viewer: h.Register("Viewer"), outsider: h.Register("Outsider")}
	f.key = "WF" + strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:8])
	r := h.Do("POST", "/api/v1/projects", map[string]any{"key": f.key, "name": "Project " + f.key}, f.owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "create project: %s", r.Body)
	f.projectID = uuid.MustParse(r.JSON(t)["id"].(string))
	f.base = "/api/v1/projects/" + f.key + "/workflow"
	for _, m := range []struct {
		u    apitest.User
		role string
	}{{f.admin, "ADMIN"}, {f.member, "MEMBER"}, {f.viewer, "VIEWER"}} {
		r := h.Do("POST", "/api/v1/projects/"+f.key+"/members", map[string]any{"userId": m.u.ID, "role": m.role}, f.owner.Access)
		require.Equal(t, http.StatusCreated, r.Status, "add member: %s", r.Body)
	}
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT workflow_id FROM projects WHERE id = $1", f.projectID).Scan(&f.workflowID))
	rows, err := h.DB.Pool.Query(context.Background(), "SELECT id FROM workflow_statuses WHERE workflow_id = $1 ORDER BY position", f.workflowID)
	require.NoError(t, err)
	var ids []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	require.Len(t, ids, 3)
	f.todo, f.prog, f.done = ids[0], ids[1], ids[2]
	return f
}

// workflowFixtureBareProject inserts a project without a workflow in SQL (no endpoint
// makes one) and returns its key.
func workflowFixtureBareProject(t *testing.T, h *apitest.Harness, owner apitest.User) string {
	t.Helper()
	key := "WF" + strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:8])
	_, err := h.DB.Pool.Exec(context.Background(), "INSERT INTO projects (key, name, owner_id) VALUES ($1, $2, $3)", key, "Bare "+key, owner.ID)
	require.NoError(t, err)
	return key
}

// issue inserts an issue of the project in status.
func (f *workflowFixture) issue(t *testing.T, status uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, f.h.DB.Pool.QueryRow(context.Background(), `
		WITH n AS (UPDATE projects SET issue_seq = issue_seq + 1 WHERE id = $1 RETURNING key, issue_seq)
		INSERT INTO issues (project_id, number, key, title, status_id, reporter_id)
		SELECT $1, n.issue_seq, n.key || '-' || n.issue_seq, 'An issue', $2, $3 FROM n RETURNING id`,
		f.projectID, status, f.owner.ID).Scan(&id))
	return id
}

// rows counts the workflow's statuses, transitions and positions, to prove refusals
// change nothing.
func (f *workflowFixture) rows(t *testing.T) [3]int {
	t.Helper()
	return [3]int{
		f.h.Count("SELECT count(*) FROM workflow_statuses WHERE workflow_id = $1", f.workflowID),
		f.h.Count("SELECT count(*) FROM workflow_transitions WHERE workflow_id = $1", f.workflowID),
		f.h.Count("SELECT count(*) FROM workflow_status_positions WHERE workflow_id = $1", f.workflowID),
	}
}

// transition creates a transition through the API and returns its id.
func (f *workflowFixture) transition(t *testing.T, from *uuid.UUID, to uuid.UUID) string {
	t.Helper()
	r := f.h.Do("POST", f.base+"/transitions", map[string]any{"fromStatusId": from, "toStatusId": to}, f.owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)["id"].(string)
}

func TestWorkflowGet(t *testing.T) {
	t.Parallel()
	f := workflowFixtureNew(t)
	for _, u := range []apitest.User{f.owner, f.admin, f.member, f.viewer} {
		r := f.h.Do("GET", f.base, nil, u.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		m := r.JSON(t)
		require.ElementsMatch(t, []string{"id", "name", "statuses", "transitions", "layout", "projectId", "isDefault"}, lo.Keys(m))
		require.Equal(t, f.workflowID.String(), m["id"])
		require.Equal(t, "Default Workflow", m["name"])
		require.Equal(t, f.projectID.String(), m["projectId"])
		require.Equal(t, true, m["isDefault"])
		require.Equal(t, []any{}, m["transitions"])
		require.Equal(t, []any{}, m["layout"])
		statuses := m["statuses"].([]any)
		require.Len(t, statuses, 3)
		for i, want := range []map[string]any{
			{"id": f.todo.String(), "name": "To Do", "category": "TODO", "color": "#6c8fef", "position": float64(0)},
			{"id": f.prog.String(), "name": "In Progress", "category": "IN_PROGRESS", "color": "#ffb432", "position": float64(1)},
			{"id": f.done.String(), "name": "Done", "category": "DONE", "color": "#63dc78", "position": float64(2)},
		} {
			require.Equal(t, want, statuses[i])
		}
	}
}

func TestWorkflowGetWithTransitionsAndLayout(t *testing.T) {
	t.Parallel()
	f := workflowFixtureNew(t)
	t1 := f.transition(t, &f.todo, f.prog)
	f.h.Do("PUT", f.base+"/transitions/"+t1+"/guards", map[string]any{"guards": []any{map[string]any{"type": "REQUIRED_FIELD", "field": "assigneeId"}}}, f.owner.Access)
	t2 := f.transition(t, nil, f.done)
	require.Equal(t, http.StatusNoContent, f.h.Do("PUT", f.base+"/layout", map[string]any{"positions": []any{
		map[string]any{"statusId": f.done, "x": 300, "y": 40}, map[string]any{"statusId": f.todo, "x": 10, "y": 20},
	}}, f.owner.Access).Status)

	m := f.h.Do("GET", f.base, nil, f.viewer.Access).JSON(t)
	require.Equal(t, []any{
		map[string]any{"id": t1, "fromStatusId": f.todo.String(), "toStatusId": f.prog.String(), "guards": `[{"type":"REQUIRED_FIELD","field":"assigneeId"}]`},
		map[string]any{"id": t2, "fromStatusId": nil, "toStatusId": f.done.String(), "guards": nil},
	}, m["transitions"])
	require.Equal(t, []any{
		map[string]any{"statusId": f.todo.String(), "x": float64(10), "y": float64(20)},
		map[string]any{"statusId": f.done.String(), "x": float64(300), "y": float64(40)},
	}, m["layout"], "in status order")
}

func TestWorkflowList(t *testing.T) {
	t.Parallel()
	f := workflowFixtureNew(t)
	r := f.h.Do("GET", "/api/v1/projects/"+f.key+"/workflows", nil, f.viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	list := r.Array(t)
	require.Len(t, list, 1)
	wf := list[0].(map[string]any)
	require.ElementsMatch(t, []string{"id", "name", "statuses"}, lo.Keys(wf))
	require.Equal(t, f.workflowID.String(), wf["id"])
	require.Equal(t, "Default Workflow", wf["name"])
	require.Len(t, wf["statuses"], 3)

	// A second workflow (not assigned), statuses inserted out of order.
	var second uuid.UUID
	ctx := context.Background()
	require.NoError(t, f.h.DB.Pool.QueryRow(ctx, "INSERT INTO workflows (name, project_id, created_at) VALUES ('Support', $1, now() + interval '1 second') RETURNING id", f.projectID).Scan(&second))
	_, err := f.h.DB.Pool.Exec(ctx, `INSERT INTO workflow_statuses (workflow_id, name, category, position) VALUES
		($1, 'Closed', 'DONE', 2), ($1, 'New', 'TODO', 0), ($1, 'Working', 'IN_PROGRESS', 1)`, second)
	require.NoError(t, err)

	list = f.h.Do("GET", "/api/v1/projects/"+f.key+"/workflows", nil, f.member.Access).Array(t)
	require.Len(t, list, 2)
	sup := list[1].(map[string]any)
	require.Equal(t, second.String(), sup["id"])
	var names []string
	for _, s := range sup["statuses"].([]any) {
		names = append(names, s.(map[string]any)["name"].(string))
	}
	require.Equal(t, []string{"New", "Working", "Closed"}, names)
	require.Equal(t, f.workflowID.String(), f.h.Do("GET", f.base, nil, f.member.Access).JSON(t)["id"], "GET /workflow stays on the assigned one")
}

func TestWorkflowProjectWithoutWorkflow(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	owner := h.Register("Owner")
	key := workflowFixtureBareProject(t, h, owner)
	base := "/api/v1/projects/" + key
	r := h.Do("GET", base+"/workflows", nil, owner.Access)
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "[]", string(r.Body))
	apitest.RequireProblem(t, h.Do("GET", base+"/workflow", nil, owner.Access), 404, "NOT_FOUND", apitest.Reason("WORKFLOW_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("POST", base+"/workflow/statuses", map[string]any{"name": "X", "category": "TODO"}, owner.Access), 404, "NOT_FOUND", apitest.Reason("WORKFLOW_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("PUT", base+"/workflow/layout", map[string]any{"positions": []any{}}, owner.Access), 404, "NOT_FOUND", apitest.Reason("WORKFLOW_NOT_FOUND"))
}

// TestWorkflowRoles is the role matrix: reads need any project role, every edit
// PROJECT_ADMIN; non-members get 403, unknown projects 404, anonymous callers 401.
func TestWorkflowRoles(t *testing.T) {
	t.Parallel()
	f := workflowFixtureNew(t)
	tid := f.transition(t, &f.todo, f.prog)
	before := f.rows(t)
	type call struct {
		method, path string
		body         any
		write        bool
	}
	calls := func(base string) []call {
		return []call{
			{"GET", strings.TrimSuffix(base, "/workflow") + "/workflows", nil, false},
			{"GET", base, nil, false},
			{"POST", base + "/statuses", map[string]any{"name": "Review", "category": "IN_PROGRESS"}, true},
			{"PUT", base + "/statuses/" + f.prog.String(), map[string]any{"name": "Doing"}, true},
			{"DELETE", base + "/statuses/" + f.done.String(), nil, true},
			{"POST", base + "/transitions", map[string]any{"fromStatusId": f.prog, "toStatusId": f.done}, true},
			{"DELETE", base + "/transitions/" + tid, nil, true},
			{"PUT", base + "/transitions/" + tid + "/guards", map[string]any{"guards": []any{}}, true},
			{"PUT", base + "/layout", map[string]any{"positions": []any{map[string]any{"statusId": f.todo}}}, true},
		}
	}
	for _, c := range calls(f.base) {
		name := c.method + " " + c.path
		for _, u := range []apitest.User{f.member, f.viewer} {
			r := f.h.Do(c.method, c.path, c.body, u.Access)
			if c.write {
				apitest.RequireProblem(t, r, http.StatusForbidden, "FORBIDDEN", apitest.NoReason)
			} else {
				require.Equal(t, http.StatusOK, r.Status, name)
			}
		}
		apitest.RequireProblem(t, f.h.Do(c.method, c.path, c.body, f.outsider.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
		require.Equal(t, http.StatusUnauthorized, f.h.Do(c.method, c.path, c.body, "").Status, name)
	}
	for _, c := range calls("/api/v1/projects/NOSUCH" + strings.ToUpper(uuid.NewString()[:3]) + "/workflow") {
		apitest.RequireProblem(t, f.h.Do(c.method, c.path, c.body, f.owner.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
	}
	require.Equal(t, before, f.rows(t), "refused calls changed nothing")
	require.Equal(t, "In Progress", f.h.Do("GET", f.base, nil, f.viewer.Access).JSON(t)["statuses"].([]any)[1].(map[string]any)["name"])

	// A read-only token of an admin reads but does not write.
	pat := f.h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "ro", "scope": "READ_ONLY"}, f.admin.Access).JSON(t)["plaintext"].(string)
	require.Equal(t, http.StatusOK, f.h.Do("GET", f.base, nil, pat).Status)
	apitest.RequireProblem(t, f.h.Do("POST", f.base+"/statuses", map[string]any{"name": "Review", "category": "TODO"}, pat), 403, "FORBIDDEN", apitest.Reason("READ_ONLY_TOKEN"))

	// Explicit ADMIN members and the owner administer.
	for _, u := range []apitest.User{f.admin, f.owner} {
		r := f.h.Do("POST", f.base+"/statuses", map[string]any{"name": "By " + u.Email, "category": "TODO"}, u.Access)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	}
}

func TestWorkflowCreateStatus(t *testing.T) {
	t.Parallel()
	f := workflowFixtureNew(t)
	r := f.h.Do("POST", f.base+"/statuses", map[string]any{"name": "  Review  ", "category": "IN_PROGRESS"}, f.admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.ElementsMatch(t, []string{"id", "name", "category", "color", "position"}, lo.Keys(m))
	require.Equal(t, "Review", m["name"], "stored trimmed")
	require.Equal(t, "IN_PROGRESS", m["category"])
	require.Equal(t, "#6c8fef", m["color"])
	require.Equal(t, float64(3), m["position"])
	id := uuid.MustParse(m["id"].(string))
	require.Equal(t, 1, f.h.Count("SELECT count(*) FROM workflow_statuses WHERE id = $1 AND workflow_id = $2 AND name = 'Review' AND position = 3", id, f.workflowID))

	long := strings.Repeat("ü", 100)
	r = f.h.Do("POST", f.base+"/statuses", map[string]any{"name": long, "category": "DONE", "color": "#A1b2C3"}, f.admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m = r.JSON(t)
	require.Equal(t, long, m["name"], "100 characters are fine")
	require.Equal(t, "#A1b2C3", m["color"])
	require.Equal(t, float64(4), m["position"])
	r = f.h.Do("POST", f.base+"/statuses", map[string]any{"name": "Null color", "category": "TODO", "color": nil}, f.admin.Access)
	require.Equal(t, "#6c8fef", r.JSON(t)["color"], "null color takes the default")

	statuses := f.h.Do("GET", f.base, nil, f.viewer.Access).JSON(t)["statuses"].([]any)
	require.Len(t, statuses, 6)
	require.Equal(t, "Review", statuses[3].(map[string]any)["name"])

	before := f.rows(t)
	for _, c := range []struct {
		body           any
		code, reason   string
		validatedField string
	}{
		{`{"name":"X",`, "BAD_REQUEST", "MALFORMED_JSON", ""},
		{`[]`, "BAD_REQUEST", "MALFORMED_JSON", ""},
		{map[string]any{"category": "TODO"}, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"name": nil, "category": "TODO"}, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"name": "X"}, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"name": 5, "category": "TODO"}, "BAD_REQUEST", "WRONG_TYPE", ""},
		{map[string]any{"name": "X", "category": "todo"}, "BAD_REQUEST", "INVALID_STATUS_CATEGORY", ""},
		{map[string]any{"name": "X", "category": "BLOCKED"}, "BAD_REQUEST", "INVALID_STATUS_CATEGORY", ""},
		{map[string]any{"name": "   ", "category": "TODO"}, "VALIDATION_ERROR", "", "name"},
		{map[string]any{"name": strings.Repeat("x", 101), "category": "TODO"}, "VALIDATION_ERROR", "", "name"},
		{map[string]any{"name": "X", "category": "TODO", "color": "red"}, "VALIDATION_ERROR", "", "color"},
		{map[string]any{"name": "X", "category": "TODO", "color": "#12345"}, "VALIDATION_ERROR", "", "color"},
		{map[string]any{"name": "X", "category": "TODO", "color": "#1234567"}, "VALIDATION_ERROR", "", "color"},
		{map[string]any{"name": "X", "category": "TODO", "color": "#GGGGGG"}, "VALIDATION_ERROR", "", "color"},
	} {
		m := apitest.RequireProblem(t, f.h.Do("POST", f.base+"/statuses", c.body, f.admin.Access), 400, c.code, apitest.ReasonOrNone(c.reason))
		if c.validatedField != "" {
			require.Contains(t, m["details"], c.validatedField)
			require.Len(t, m["errors"], 1)
		}
	}
	require.Equal(t, before, f.rows(t))

	m = f.h.Do("POST", f.base+"/statuses", map[string]any{"name": "X", "category": "TODO", "color": "blue"}, f.admin.Access, "Accept-Language", "de").JSON(t)
	require.Equal(t, "muss eine Farbe wie #6c8fef sein", m["details"].(map[string]any)["color"])
}

func TestWorkflowUpdateStatus(t *testing.T) {
	t.Parallel()
	f := workflowFixtureNew(t)
	path := f.base + "/statuses/" + f.prog.String()
	r := f.h.Do("PUT", path, map[string]any{"name": "Doing"}, f.admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, map[string]any{"id": f.prog.String(), "name": "Doing", "category": "IN_PROGRESS", "color": "#ffb432", "position": float64(1)}, r.JSON(t))

	r = f.h.Do("PUT", path, map[string]any{"category": "DONE", "color": "#101010", "name": nil}, f.admin.Access)
	require.Equal(t, map[string]any{"id": f.prog.String(), "name": "Doing", "category": "DONE", "color": "#101010", "position": float64(1)}, r.JSON(t))
	r = f.h.Do("PUT", path, map[string]any{}, f.admin.Access)
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "Doing", r.JSON(t)["name"], "an empty body changes nothing")
	require.Equal(t, 1, f.h.Count("SELECT count(*) FROM workflow_statuses WHERE id = $1 AND name = 'Doing' AND category = 'DONE' AND color = '#101010'", f.prog))

	for _, c := range []struct {
		body         any
		code, reason string
	}{
		{"not json", "BAD_REQUEST", "MALFORMED_JSON"},
		{map[string]any{"category": "DOING"}, "BAD_REQUEST", "INVALID_STATUS_CATEGORY"},
		{map[string]any{"category": 1}, "BAD_REQUEST", "WRONG_TYPE"},
		{map[string]any{"name": ""}, "VALIDATION_ERROR", ""},
		{map[string]any{"name": strings.Repeat("n", 101)}, "VALIDATION_ERROR", ""},
		{map[string]any{"color": "#fff"}, "VALIDATION_ERROR", ""},
	} {
		apitest.RequireProblem(t, f.h.Do("PUT", path, c.body, f.admin.Access), 400, c.code, apitest.ReasonOrNone(c.reason))
	}
	require.Equal(t, 1, f.h.Count("SELECT count(*) FROM workflow_statuses WHERE id = $1 AND name = 'Doing' AND category = 'DONE' AND color = '#101010'", f.prog))

	other := workflowFixtureNew(t)
	apitest.RequireProblem(t, f.h.Do("PUT", f.base+"/statuses/"+other.todo.String(), map[string]any{"name": "Stolen"}, f.admin.Access), 404, "NOT_FOUND", apitest.Reason("STATUS_NOT_FOUND"))
	apitest.RequireProblem(t, f.h.Do("PUT", f.base+"/statuses/"+other.todo.String(), map[string]any{}, f.admin.Access), 404, "NOT_FOUND", apitest.Reason("STATUS_NOT_FOUND"))
	apitest.RequireProblem(t, f.h.Do("PUT", f.base+"/statuses/"+uuid.NewString(), map[string]any{"name": "Ghost"}, f.admin.Access), 404, "NOT_FOUND", apitest.Reason("STATUS_NOT_FOUND"))
	apitest.RequireProblem(t, f.h.Do("PUT", f.base+"/statuses/not-a-uuid", map[string]any{"name": "X"}, f.admin.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	require.Equal(t, 1, other.h.Count("SELECT count(*) FROM workflow_statuses WHERE id = $1 AND name = 'To Do'", other.todo))
}

func TestWorkflowDeleteStatus(t *testing.T) {
	t.Parallel()
	f := workflowFixtureNew(t)
	f.transition(t, &f.todo, f.prog)
	f.transition(t, &f.prog, f.done)
	require.Equal(t, http.StatusNoContent, f.h.Do("PUT", f.base+"/layout", map[string]any{"positions": []any{
		map[string]any{"statusId": f.prog}, map[string]any{"statusId": f.done}}}, f.owner.Access).Status)

	r := f.h.Do("DELETE", f.base+"/statuses/"+f.prog.String(), nil, f.admin.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	require.Equal(t, [3]int{2, 0, 1}, f.rows(t), "its transitions and position went with it")
	apitest.RequireProblem(t, f.h.Do("DELETE", f.base+"/statuses/"+f.prog.String(), nil, f.admin.Access), 404, "NOT_FOUND", apitest.Reason("STATUS_NOT_FOUND"))

	// In use: 409, nothing deleted; free again once the issue moves.
	issue := f.issue(t, f.todo)
	m := apitest.RequireProblem(t, f.h.Do("DELETE", f.base+"/statuses/"+f.todo.String(), nil, f.admin.Access), 409, "CONFLICT", apitest.Reason("IN_USE"))
	require.NotEmpty(t, m["message"])
	require.Equal(t, 1, f.h.Count("SELECT count(*) FROM workflow_statuses WHERE id = $1", f.todo))
	_, err := f.h.DB.Pool.Exec(context.Background(), "UPDATE issues SET status_id = $1 WHERE id = $2", f.done, issue)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, f.h.Do("DELETE", f.base+"/statuses/"+f.todo.String(), nil, f.admin.Access).Status)
	apitest.RequireProblem(t, f.h.Do("DELETE", f.base+"/statuses/"+f.done.String(), nil, f.admin.Access), 409, "CONFLICT", apitest.Reason("IN_USE"))

	other := workflowFixtureNew(t)
	apitest.RequireProblem(t, f.h.Do("DELETE", f.base+"/statuses/"+other.todo.String(), nil, f.admin.Access), 404, "NOT_FOUND", apitest.Reason("STATUS_NOT_FOUND"))
	require.Equal(t, 3, other.rows(t)[0])
	apitest.RequireProblem(t, f.h.Do("DELETE", f.base+"/statuses/123", nil, f.admin.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
}

func TestWorkflowTransitions(t *testing.T) {
	t.Parallel()
	f := workflowFixtureNew(t)
	r := f.h.Do("POST", f.base+"/transitions", map[string]any{"fromStatusId": f.todo, "toStatusId": f.prog}, f.admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.ElementsMatch(t, []string{"id", "fromStatusId", "toStatusId", "guards"}, lo.Keys(m))
	require.Equal(t, f.todo.String(), m["fromStatusId"])
	require.Equal(t, f.prog.String(), m["toStatusId"])
	require.Nil(t, m["guards"])
	first := m["id"].(string)

	for _, body := range []any{
		map[string]any{"fromStatusId": nil, "toStatusId": f.done},
		map[string]any{"toStatusId": f.done},
	} {
		r = f.h.Do("POST", f.base+"/transitions", body, f.admin.Access)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		m = r.JSON(t)
		require.Contains(t, m, "fromStatusId")
		require.Nil(t, m["fromStatusId"], "absent or null = from any status")
	}
	require.Equal(t, 2, f.h.Count("SELECT count(*) FROM workflow_transitions WHERE workflow_id = $1 AND from_status_id IS NULL AND to_status_id = $2", f.workflowID, f.done))

	before := f.rows(t)
	other := workflowFixtureNew(t)
	for _, c := range []struct {
		body                 any
		status               int
		code, reason, detail string
	}{
		{map[string]any{"fromStatusId": f.todo}, 400, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"toStatusId": nil}, 400, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"toStatusId": "nope"}, 400, "BAD_REQUEST", "INVALID_UUID", ""},
		{map[string]any{"fromStatusId": "nope", "toStatusId": f.done}, 400, "BAD_REQUEST", "INVALID_UUID", ""},
		{map[string]any{"toStatusId": 7}, 400, "BAD_REQUEST", "WRONG_TYPE", ""},
		{"{", 400, "BAD_REQUEST", "MALFORMED_JSON", ""},
		{map[string]any{"toStatusId": other.done}, 404, "NOT_FOUND", "STATUS_NOT_FOUND", ""},
		{map[string]any{"fromStatusId": other.todo, "toStatusId": f.done}, 404, "NOT_FOUND", "STATUS_NOT_FOUND", ""},
		{map[string]any{"fromStatusId": f.todo, "toStatusId": uuid.New()}, 404, "NOT_FOUND", "STATUS_NOT_FOUND", ""},
	} {
		apitest.RequireProblem(t, f.h.Do("POST", f.base+"/transitions", c.body, f.admin.Access), c.status, c.code, apitest.ReasonOrNone(c.reason))
	}
	require.Equal(t, before, f.rows(t))
	m = apitest.RequireProblem(t, f.h.Do("POST", f.base+"/transitions", map[string]any{"toStatusId": "x"}, f.admin.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	require.Equal(t, "toStatusId is not a valid id.", m["message"])

	// Delete.
	r = f.h.Do("DELETE", f.base+"/transitions/"+first, nil, f.admin.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Equal(t, 0, f.h.Count("SELECT count(*) FROM workflow_transitions WHERE id = $1", uuid.MustParse(first)))
	apitest.RequireProblem(t, f.h.Do("DELETE", f.base+"/transitions/"+first, nil, f.admin.Access), 404, "NOT_FOUND", apitest.Reason("TRANSITION_NOT_FOUND"))
	otherTr := other.transition(t, nil, other.done)
	apitest.RequireProblem(t, f.h.Do("DELETE", f.base+"/transitions/"+otherTr, nil, f.admin.Access), 404, "NOT_FOUND", apitest.Reason("TRANSITION_NOT_FOUND"))
	require.Equal(t, 1, f.h.Count("SELECT count(*) FROM workflow_transitions WHERE id = $1", uuid.MustParse(otherTr)))
	apitest.RequireProblem(t, f.h.Do("DELETE", f.base+"/transitions/zzz", nil, f.admin.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	require.Len(t, f.h.Do("GET", f.base, nil, f.member.Access).JSON(t)["transitions"], 2)
}

func TestWorkflowGuards(t *testing.T) {
	t.Parallel()
	f := workflowFixtureNew(t)
	tid := f.transition(t, &f.todo, f.prog)
	path := f.base + "/transitions/" + tid + "/guards"
	body := map[string]any{"guards": []any{
		map[string]any{"type": "REQUIRED_FIELD", "field": "assigneeId", "roles": []string{"ignored"}},
		map[string]any{"type": "ROLE_RESTRICTION", "roles": []string{"ADMIN", "MEMBER", "VIEWER", "NONE"}, "extra": true},
		map[string]any{"type": "ROLE_RESTRICTION", "roles": []string{}},
	}}
	r := f.h.Do("PUT", path, body, f.admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.Equal(t, tid, m["id"])
	require.Equal(t, f.todo.String(), m["fromStatusId"])
	require.Equal(t, f.prog.String(), m["toStatusId"])
	want := `[{"type":"REQUIRED_FIELD","field":"assigneeId"},{"type":"ROLE_RESTRICTION","roles":["ADMIN","MEMBER","VIEWER","NONE"]},{"type":"ROLE_RESTRICTION","roles":[]}]`
	require.Equal(t, want, m["guards"], "a string of JSON text; unknown members are dropped")
	var parsed []map[string]any
	require.NoError(t, json.Unmarshal([]byte(m["guards"].(string)), &parsed))
	require.Len(t, parsed, 3)
	require.Equal(t, want, f.h.Do("GET", f.base, nil, f.viewer.Access).JSON(t)["transitions"].([]any)[0].(map[string]any)["guards"])

	stored := func() string {
		var s *string
		require.NoError(t, f.h.DB.Pool.QueryRow(context.Background(), "SELECT guards::text FROM workflow_transitions WHERE id = $1", uuid.MustParse(tid)).Scan(&s))
		if s == nil {
			return "NULL"
		}
		return *s
	}
	saved := stored()
	for _, c := range []struct {
		body         any
		code, reason string
		field        string
	}{
		{map[string]any{}, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"guards": nil}, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"guards": "[]"}, "BAD_REQUEST", "WRONG_TYPE", ""},
		{`[{"type":"REQUIRED_FIELD","field":"title"}]`, "BAD_REQUEST", "MALFORMED_JSON", ""},
		{map[string]any{"guards": []any{map[string]any{"field": "title"}}}, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"guards": []any{nil}}, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"guards": []any{map[string]any{"type": "ALWAYS_FAIL"}}}, "BAD_REQUEST", "UNKNOWN_GUARD_TYPE", ""},
		{map[string]any{"guards": []any{map[string]any{"type": "required_field", "field": "title"}}}, "BAD_REQUEST", "UNKNOWN_GUARD_TYPE", ""},
		{map[string]any{"guards": []any{map[string]any{"type": "REQUIRED_FIELD"}}}, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"guards": []any{map[string]any{"type": "ROLE_RESTRICTION"}}}, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"guards": []any{map[string]any{"type": "ROLE_RESTRICTION", "roles": "ADMIN"}}}, "BAD_REQUEST", "WRONG_TYPE", ""},
		{map[string]any{"guards": []any{map[string]any{"type": "ROLE_RESTRICTION", "roles": []string{"ADMIN", "OWNER"}}}}, "BAD_REQUEST", "UNKNOWN_GUARD_ROLE", ""},
		{map[string]any{"guards": []any{map[string]any{"type": "ROLE_RESTRICTION", "roles": []string{"admin"}}}}, "BAD_REQUEST", "UNKNOWN_GUARD_ROLE", ""},
		{map[string]any{"guards": []any{map[string]any{"type": "REQUIRED_FIELD", "field": "title"}, map[string]any{"type": "REQUIRED_FIELD", "field": "status"}}}, "BAD_REQUEST", "INVALID_ENUM", ""},
		{map[string]any{"guards": []any{map[string]any{"type": "REQUIRED_FIELD", "field": ""}}}, "BAD_REQUEST", "INVALID_ENUM", ""},
	} {
		m := apitest.RequireProblem(t, f.h.Do("PUT", path, c.body, f.admin.Access), 400, c.code, apitest.ReasonOrNone(c.reason))
		if c.field != "" {
			require.Len(t, m["errors"], 1)
			require.Contains(t, m["details"], c.field)
		}
	}
	require.Equal(t, saved, stored(), "refused guards changed nothing")

	m = apitest.RequireProblem(t, f.h.Do("PUT", path, map[string]any{"guards": []any{map[string]any{"type": "REQUIRED_FIELD", "field": "labels"}}}, f.admin.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_ENUM"))
	require.Equal(t, "guards[0].field must be one of title, description, assigneeId, storyPoints, dueDate.", m["message"])
	m = apitest.RequireProblem(t, f.h.Do("PUT", path, map[string]any{"guards": []any{map[string]any{"type": "ROLE_RESTRICTION", "roles": []string{"OWNER"}}}}, f.admin.Access), 400, "BAD_REQUEST", apitest.Reason("UNKNOWN_GUARD_ROLE"))
	require.Contains(t, m["message"], "OWNER")
	m = apitest.RequireProblem(t, f.h.Do("PUT", path, map[string]any{"guards": []any{map[string]any{"type": "NOPE"}}}, f.admin.Access, "Accept-Language", "de"), 400, "BAD_REQUEST", apitest.Reason("UNKNOWN_GUARD_TYPE"))
	require.Equal(t, "Unbekannter Guard-Typ NOPE; erlaubt sind REQUIRED_FIELD und ROLE_RESTRICTION.", m["message"])

	for _, f2 := range []string{"title", "description", "assigneeId", "storyPoints", "dueDate"} {
		r = f.h.Do("PUT", path, map[string]any{"guards": []any{map[string]any{"type": "REQUIRED_FIELD", "field": f2}}}, f.admin.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, `[{"type":"REQUIRED_FIELD","field":"`+f2+`"}]`, r.JSON(t)["guards"])
	}

	// An empty list clears the guards.
	r = f.h.Do("PUT", path, map[string]any{"guards": []any{}}, f.admin.Access)
	require.Equal(t, http.StatusOK, r.Status)
	require.Nil(t, r.JSON(t)["guards"])
	require.Equal(t, "NULL", stored())

	other := workflowFixtureNew(t)
	otherTr := other.transition(t, nil, other.done)
	apitest.RequireProblem(t, f.h.Do("PUT", f.base+"/transitions/"+otherTr+"/guards", map[string]any{"guards": []any{}}, f.admin.Access), 404, "NOT_FOUND", apitest.Reason("TRANSITION_NOT_FOUND"))
	apitest.RequireProblem(t, f.h.Do("PUT", f.base+"/transitions/"+uuid.NewString()+"/guards", map[string]any{"guards": []any{}}, f.admin.Access), 404, "NOT_FOUND", apitest.Reason("TRANSITION_NOT_FOUND"))
	apitest.RequireProblem(t, f.h.Do("PUT", f.base+"/transitions/x/guards", map[string]any{"guards": []any{}}, f.admin.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
}

// TestWorkflowGuardsDecideStatusChanges runs guards saved through the API through the
// rule the issue endpoints call.
func TestWorkflowGuardsDecideStatusChanges(t *testing.T) {
	t.Parallel()
	f := workflowFixtureNew(t)
	tid := f.transition(t, &f.todo, f.prog)
	r := f.h.Do("PUT", f.base+"/transitions/"+tid+"/guards", map[string]any{"guards": []any{
		map[string]any{"type": "REQUIRED_FIELD", "field": "storyPoints"},
		map[string]any{"type": "ROLE_RESTRICTION", "roles": []string{"ADMIN", "MEMBER"}},
	}}, f.admin.Access)
	require.Equal(t, http.StatusOK, r.Status)
	ctx := context.Background()
	db := f.h.DB.Bun
	points := 2
	withPoints := workflow.IssueFields{Title: "T", StoryPoints: &points}
	require.NoError(t, workflow.CheckStatusChange(ctx, db, &f.workflowID, f.todo, f.prog, withPoints, "MEMBER"))
	var g *workflow.GuardError
	require.ErrorAs(t, workflow.CheckStatusChange(ctx, db, &f.workflowID, f.todo, f.prog, workflow.IssueFields{Title: "T"}, "MEMBER"), &g)
	require.Equal(t, "storyPoints", g.Field)
	require.ErrorAs(t, workflow.CheckStatusChange(ctx, db, &f.workflowID, f.todo, f.prog, withPoints, "VIEWER"), &g)
	require.Equal(t, "VIEWER", g.Role)
	require.ErrorIs(t, workflow.CheckStatusChange(ctx, db, &f.workflowID, f.todo, f.done, withPoints, "ADMIN"), workflow.ErrTransitionNotAllowed)

	require.Equal(t, http.StatusNoContent, f.h.Do("DELETE", f.base+"/transitions/"+tid, nil, f.admin.Access).Status)
	require.NoError(t, workflow.CheckStatusChange(ctx, db, &f.workflowID, f.todo, f.done, workflow.IssueFields{}, ""),
		"without transitions every change is allowed again")
}

func TestWorkflowLayout(t *testing.T) {
	t.Parallel()
	f := workflowFixtureNew(t)
	layout := func() []any { return f.h.Do("GET", f.base, nil, f.viewer.Access).JSON(t)["layout"].([]any) }
	r := f.h.Do("PUT", f.base+"/layout", map[string]any{"positions": []any{
		map[string]any{"statusId": f.prog, "x": 120, "y": -30},
		map[string]any{"statusId": f.todo},
		map[string]any{"statusId": f.done, "x": 2147483647, "y": -2147483648},
	}}, f.admin.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	require.Equal(t, []any{
		map[string]any{"statusId": f.todo.String(), "x": float64(0), "y": float64(0)},
		map[string]any{"statusId": f.prog.String(), "x": float64(120), "y": float64(-30)},
		map[string]any{"statusId": f.done.String(), "x": float64(2147483647), "y": float64(-2147483648)},
	}, layout())

	// Replace with a subset: the omitted statuses lose their positions.
	r = f.h.Do("PUT", f.base+"/layout", map[string]any{"positions": []any{map[string]any{"statusId": f.done, "x": 5, "y": 6}}}, f.admin.Access)
	require.Equal(t, http.StatusNoContent, r.Status)
	require.Equal(t, []any{map[string]any{"statusId": f.done.String(), "x": float64(5), "y": float64(6)}}, layout())
	require.Equal(t, 1, f.h.Count("SELECT count(*) FROM workflow_status_positions WHERE workflow_id = $1", f.workflowID))

	// Refusals leave the layout alone.
	other := workflowFixtureNew(t)
	for _, c := range []struct {
		body                 any
		status               int
		code, reason, detail string
	}{
		{map[string]any{}, 400, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"positions": nil}, 400, "BAD_REQUEST", "MISSING_FIELD", ""},
		{`[{"statusId":"` + f.todo.String() + `"}]`, 400, "BAD_REQUEST", "MALFORMED_JSON", ""},
		{map[string]any{"positions": []any{map[string]any{"x": 1}}}, 400, "BAD_REQUEST", "MISSING_FIELD", ""},
		{map[string]any{"positions": []any{map[string]any{"statusId": "abc"}}}, 400, "BAD_REQUEST", "INVALID_UUID", ""},
		{map[string]any{"positions": []any{map[string]any{"statusId": f.todo, "x": 1.5}}}, 400, "BAD_REQUEST", "WRONG_TYPE", ""},
		{map[string]any{"positions": []any{map[string]any{"statusId": f.todo, "y": "1"}}}, 400, "BAD_REQUEST", "WRONG_TYPE", ""},
		{map[string]any{"positions": []any{map[string]any{"statusId": f.todo, "x": 2147483648}}}, 400, "VALIDATION_ERROR", "", "positions[0].x"},
		{map[string]any{"positions": []any{map[string]any{"statusId": f.todo}, map[string]any{"statusId": f.prog, "y": -2147483649}}}, 400, "VALIDATION_ERROR", "", "positions[1].y"},
		{map[string]any{"positions": []any{map[string]any{"statusId": f.todo}, map[string]any{"statusId": other.todo}}}, 404, "NOT_FOUND", "STATUS_NOT_FOUND", ""},
		{map[string]any{"positions": []any{map[string]any{"statusId": uuid.New()}}}, 404, "NOT_FOUND", "STATUS_NOT_FOUND", ""},
	} {
		m := apitest.RequireProblem(t, f.h.Do("PUT", f.base+"/layout", c.body, f.admin.Access), c.status, c.code, apitest.ReasonOrNone(c.reason))
		if c.detail != "" {
			require.Contains(t, m["details"], c.detail)
		}
	}
	require.Equal(t, []any{map[string]any{"statusId": f.done.String(), "x": float64(5), "y": float64(6)}}, layout())

	// A status named twice keeps its last entry; an empty list clears the canvas.
	r = f.h.Do("PUT", f.base+"/layout", map[string]any{"positions": []any{
		map[string]any{"statusId": f.todo, "x": 1}, map[string]any{"statusId": f.todo, "x": 2}}}, f.admin.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Equal(t, []any{map[string]any{"statusId": f.todo.String(), "x": float64(2), "y": float64(0)}}, layout())
	require.Equal(t, http.StatusNoContent, f.h.Do("PUT", f.base+"/layout", map[string]any{"positions": []any{}}, f.admin.Access).Status)
	require.Equal(t, []any{}, layout())
}

// TestWorkflowRefusalsThroughIssuePatch sets guards up through the workflow endpoints
// and moves an issue through PATCH issue: the refusal is 400 with the reason and a
// message naming the field or the actor's role, and nothing changes.
func TestWorkflowRefusalsThroughIssuePatch(t *testing.T) {
	t.Parallel()
	f := workflowFixtureNew(t)
	r := f.h.Do("POST", "/api/v1/projects/"+f.key+"/issues", map[string]any{"title": "Guarded"}, f.member.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	issue := "/api/v1/projects/" + f.key + "/issues/" + r.JSON(t)["key"].(string)
	move := func(u apitest.User, body map[string]any, headers ...string) *apitest.Response {
		return f.h.Do("PATCH", issue, body, u.Access, headers...)
	}
	statusNow := func() string { return f.h.Do("GET", issue, nil, f.viewer.Access).JSON(t)["statusId"].(string) }

	// Without transitions every move is allowed.
	require.Equal(t, http.StatusOK, move(f.member, map[string]any{"statusId": f.done}).Status)
	require.Equal(t, http.StatusOK, move(f.member, map[string]any{"statusId": f.todo}).Status)

	tid := f.transition(t, &f.todo, f.prog)
	r = f.h.Do("PUT", f.base+"/transitions/"+tid+"/guards", map[string]any{"guards": []any{
		map[string]any{"type": "REQUIRED_FIELD", "field": "assigneeId"},
		map[string]any{"type": "ROLE_RESTRICTION", "roles": []string{"ADMIN"}},
	}}, f.admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	m := apitest.RequireProblem(t, move(f.admin, map[string]any{"statusId": f.done}), 400, "BAD_REQUEST", apitest.Reason("TRANSITION_NOT_ALLOWED"))
	require.Equal(t, "The workflow does not allow this status change.", m["message"])
	m = apitest.RequireProblem(t, move(f.admin, map[string]any{"statusId": f.prog}), 400, "BAD_REQUEST", apitest.Reason("GUARD_FAILED"))
	require.Equal(t, "The transition requires the field assigneeId.", m["message"])
	m = apitest.RequireProblem(t, move(f.admin, map[string]any{"statusId": f.prog}, "Accept-Language", "de"), 400, "BAD_REQUEST", apitest.Reason("GUARD_FAILED"))
	require.Equal(t, "Der Übergang erfordert das Feld assigneeId.", m["message"])
	m = apitest.RequireProblem(t, move(f.member, map[string]any{"statusId": f.prog, "assigneeId": f.member.ID}), 400, "BAD_REQUEST", apitest.Reason("GUARD_FAILED"))
	require.Equal(t, "The role MEMBER may not make this transition.", m["message"])
	require.Equal(t, f.todo.String(), statusNow(), "refused moves change nothing")
	require.Nil(t, f.h.Do("GET", issue, nil, f.viewer.Access).JSON(t)["assigneeId"], "not even the other members of the refused patch")

	r = move(f.admin, map[string]any{"statusId": f.prog, "assigneeId": f.member.ID})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, f.prog.String(), statusNow())
}
