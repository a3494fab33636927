package automation_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// rulesPath is the project's rule collection (suffix appended).
func autoRules(f *apitest.Project, suffix string) string {
	return f.Path("/automation/rules" + suffix)
}

// createRule posts body as the owner and returns the created rule.
func autoRule(f *apitest.Project, t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := f.H.Do("POST", autoRules(f, ""), body, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// stripIDs removes every "id" member, so a rule compares with the request that made it.
func autoStripIDs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "id" {
				out[k] = autoStripIDs(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = autoStripIDs(e)
		}
		return out
	}
	return v
}

// problemFields is field → code of a VALIDATION_ERROR body.
func autoProblems(t *testing.T, r *apitest.Response) map[string]string {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.Equal(t, "VALIDATION_ERROR", m["code"], "%s", r.Body)
	out := map[string]string{}
	for _, e := range m["errors"].([]any) {
		fe := e.(map[string]any)
		out[fe["field"].(string)] = fe["code"].(string)
		require.NotEmpty(t, fe["message"])
	}
	return out
}

// TestAutomationRuleReadsBackAsWritten: a rule with a three-level tree and actions sent
// out of position order reads back with the same tree, the actions in position order
// and every parameter as a string; the triggerPayload object comes back as its text.
func TestAutomationRuleReadsBackAsWritten(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	body := map[string]any{
		"name": "Escalate blockers", "triggerType": "PRIORITY_CHANGED", "triggerPayload": map[string]any{"priority": "CRITICAL"},
		"rootGroupLogic": "OR", "scope": "SYSTEM", // the path decides the scope
		"conditions": []any{map[string]any{"type": "ISSUE_TYPE", "operator": "IS", "params": map[string]any{"value": "BUG"}}},
		"childGroups": []any{
			map[string]any{"logic": "AND", "conditions": []any{
				map[string]any{"type": "STORY_POINTS", "operator": "GT", "params": map[string]any{"value": 3}},
				map[string]any{"type": "STATUS", "operator": "IS_NOT", "params": map[string]any{"value": f.Done.String()}},
			}, "childGroups": []any{
				map[string]any{"logic": "OR", "conditions": []any{
					map[string]any{"type": "ASSIGNEE", "operator": "IS", "params": map[string]any{"value": ""}},
				}, "childGroups": []any{}},
			}},
			map[string]any{"logic": "OR", "conditions": []any{}, "childGroups": []any{}},
		},
		"actions": []any{
			map[string]any{"position": 2, "type": "CREATE_COMMENT", "params": map[string]any{"body": "Escalated"}},
			map[string]any{"position": 0, "type": "SET_STATUS", "params": map[string]any{"statusId": f.Prog.String()}},
			map[string]any{"position": 1, "type": "SET_ASSIGNEE", "params": map[string]any{"assigneeId": f.Member.ID.String()}},
		},
	}
	rule := autoRule(f, t, body)
	require.Equal(t, "PROJECT", rule["scope"])
	require.Equal(t, f.ProjectID.String(), rule["projectId"])
	require.Equal(t, f.Owner.ID.String(), rule["createdBy"])
	require.Equal(t, true, rule["enabled"])
	require.Equal(t, `{"priority":"CRITICAL"}`, rule["triggerPayload"])
	require.NotEmpty(t, rule["createdAt"])

	wantRoot := map[string]any{"logic": "OR",
		"conditions": []any{map[string]any{"type": "ISSUE_TYPE", "operator": "IS", "params": map[string]any{"value": "BUG"}}},
		"childGroups": []any{
			map[string]any{"logic": "AND", "conditions": []any{
				map[string]any{"type": "STORY_POINTS", "operator": "GT", "params": map[string]any{"value": "3"}},
				map[string]any{"type": "STATUS", "operator": "IS_NOT", "params": map[string]any{"value": f.Done.String()}},
			}, "childGroups": []any{
				map[string]any{"logic": "OR", "conditions": []any{
					map[string]any{"type": "ASSIGNEE", "operator": "IS", "params": map[string]any{"value": ""}},
				}, "childGroups": []any{}},
			}},
			map[string]any{"logic": "OR", "conditions": []any{}, "childGroups": []any{}},
		}}
	require.Equal(t, wantRoot, autoStripIDs(rule["rootGroup"]))
	require.Equal(t, []any{
		map[string]any{"position": float64(0), "type": "SET_STATUS", "params": map[string]any{"statusId": f.Prog.String()}},
		map[string]any{"position": float64(1), "type": "SET_ASSIGNEE", "params": map[string]any{"assigneeId": f.Member.ID.String()}},
		map[string]any{"position": float64(2), "type": "CREATE_COMMENT", "params": map[string]any{"body": "Escalated"}},
	}, autoStripIDs(rule["actions"]))

	// GET answers the same document.
	r := f.H.Do("GET", autoRules(f, "/"+rule["id"].(string)), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, rule, r.JSON(t))

	// A payload sent as text is kept as that text; none is null.
	text := `{ "toStatusId": "` + f.Done.String() + `" }`
	rule2 := autoRule(f, t, map[string]any{"name": "On done", "triggerType": "STATUS_CHANGED", "triggerPayload": text})
	require.Equal(t, text, rule2["triggerPayload"])
	require.Equal(t, map[string]any{"logic": "AND", "conditions": []any{}, "childGroups": []any{}}, autoStripIDs(rule2["rootGroup"]))
	require.Equal(t, []any{}, rule2["actions"])
	rule3 := autoRule(f, t, map[string]any{"name": "Any", "triggerType": "ISSUE_CREATED", "triggerPayload": "  ", "enabled": false})
	require.Nil(t, rule3["triggerPayload"])
	require.Equal(t, false, rule3["enabled"])
}

// TestAutomationRuleLifecycle: list (paged, oldest first), rename, toggle and delete at
// project scope, with the roles each needs; another project's rule is not found.
func TestAutomationRuleLifecycle(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	var ids []string
	for _, name := range []string{"one", "two", "three"} {
		ids = append(ids, autoRule(f, t, map[string]any{"name": name, "triggerType": "ISSUE_CREATED"})["id"].(string))
	}

	r := h.Do("GET", autoRules(f, "?size=2"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	page := r.JSON(t)
	require.Equal(t, []any{float64(3), float64(2), float64(2)}, []any{page["totalElements"], page["totalPages"], page["size"]})
	content := page["content"].([]any)
	require.Equal(t, []string{"one", "two"}, []string{content[0].(map[string]any)["name"].(string), content[1].(map[string]any)["name"].(string)})
	r = h.Do("GET", autoRules(f, "?page=1&size=2"), nil, f.Viewer.Access)
	require.Equal(t, "three", r.JSON(t)["content"].([]any)[0].(map[string]any)["name"])

	// Writes need project ADMIN; reads any role; outsiders nothing.
	for _, c := range []struct {
		method, path string
		body         any
		user         apitest.User
		want         int
	}{
		{"POST", autoRules(f, ""), map[string]any{"name": "x", "triggerType": "ISSUE_CREATED"}, f.Member, 403},
		{"PUT", autoRules(f, "/"+ids[0]), map[string]any{"name": "x"}, f.Member, 403},
		{"PATCH", autoRules(f, "/"+ids[0]+"/toggle"), nil, f.Member, 403},
		{"DELETE", autoRules(f, "/"+ids[0]), nil, f.Member, 403},
		{"GET", autoRules(f, ""), nil, f.Outsider, 403},
		{"GET", autoRules(f, "/"+ids[0]), nil, f.Outsider, 403},
		{"GET", autoRules(f, "/"+ids[0]+"/executions"), nil, f.Viewer, 200},
		{"GET", autoRules(f, "/"+uuid.NewString()), nil, f.Viewer, 404},
		{"GET", autoRules(f, "/not-a-uuid"), nil, f.Viewer, 400},
		{"GET", "/api/v1/projects/NOSUCH/automation/rules", nil, f.Owner, 404},
	} {
		r := h.Do(c.method, c.path, c.body, c.user.Access)
		require.Equal(t, c.want, r.Status, "%s %s: %s", c.method, c.path, r.Body)
	}

	r = h.Do("PUT", autoRules(f, "/"+ids[0]), map[string]any{"name": "renamed", "triggerType": "COMMENT_ADDED"}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, []any{"renamed", "COMMENT_ADDED"}, []any{r.JSON(t)["name"], r.JSON(t)["triggerType"]}, "the members sent")
	require.Equal(t, map[string]string{"name": "BLANK"}, autoProblems(t, h.Do("PUT", autoRules(f, "/"+ids[0]), map[string]any{"name": " "}, f.Owner.Access)))
	r = h.Do("PUT", autoRules(f, "/"+ids[0]), map[string]any{}, f.Owner.Access)
	require.Equal(t, http.StatusBadRequest, r.Status)
	require.Equal(t, "MISSING_FIELD", r.JSON(t)["reason"])

	r = h.Do("PATCH", autoRules(f, "/"+ids[0]+"/toggle"), nil, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, false, r.JSON(t)["enabled"])
	r = h.Do("PATCH", autoRules(f, "/"+ids[0]+"/toggle"), nil, f.Owner.Access)
	require.Equal(t, true, r.JSON(t)["enabled"])

	// Another project's rule is not found through this project, nor through /admin.
	g := apitest.NewProject(t, h)
	for _, method := range []string{"GET", "PUT", "DELETE"} {
		r := h.Do(method, autoRules(g, "/"+ids[1]), map[string]any{"name": "x"}, g.Owner.Access)
		require.Equal(t, http.StatusNotFound, r.Status, "%s: %s", method, r.Body)
		require.Equal(t, "RULE_NOT_FOUND", r.JSON(t)["reason"])
	}
	admin := h.Register("Ada")
	h.MakeAdmin(admin)
	r = h.Do("GET", "/api/v1/admin/automation/rules/"+ids[1], nil, admin.Access)
	require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)

	r = h.Do("DELETE", autoRules(f, "/"+ids[1]), nil, f.Owner.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM automation_groups WHERE rule_id = $1", ids[1]))
	r = h.Do("GET", autoRules(f, "/"+ids[1]), nil, f.Owner.Access)
	require.Equal(t, http.StatusNotFound, r.Status)
}

// TestAutomationSystemRules: /admin/automation/rules is for system ADMINs, lists only
// SYSTEM rules and takes ids of any workflow (checked when the rule runs).
func TestAutomationSystemRules(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	admin := h.Register("Ada")
	h.MakeAdmin(admin)
	autoRule(f, t, map[string]any{"name": "project rule", "triggerType": "ISSUE_CREATED"})

	body := map[string]any{"name": "Everywhere", "triggerType": "STATUS_CHANGED",
		"triggerPayload": `{"toStatusId":"` + uuid.NewString() + `"}`,
		"conditions":     []any{map[string]any{"type": "PROJECT", "operator": "IS", "params": map[string]any{"value": uuid.NewString()}}},
		"actions":        []any{map[string]any{"type": "SET_STATUS", "params": map[string]any{"statusId": uuid.NewString()}}}}
	r := h.Do("POST", "/api/v1/admin/automation/rules", body, f.Owner.Access)
	require.Equal(t, http.StatusForbidden, r.Status, "a project ADMIN is no system ADMIN: %s", r.Body)
	r = h.Do("POST", "/api/v1/admin/automation/rules/"+uuid.NewString()+"/take-over", nil, f.Owner.Access)
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	r = h.Do("POST", "/api/v1/admin/automation/rules", body, admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	rule := r.JSON(t)
	require.Equal(t, "SYSTEM", rule["scope"])
	require.Nil(t, rule["projectId"])
	id := rule["id"].(string)

	r = h.Do("GET", "/api/v1/admin/automation/rules?size=200", nil, admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var names []string
	for _, c := range r.JSON(t)["content"].([]any) {
		require.Equal(t, "SYSTEM", c.(map[string]any)["scope"])
		names = append(names, c.(map[string]any)["name"].(string))
	}
	require.Contains(t, names, "Everywhere")
	require.NotContains(t, names, "project rule")

	for _, c := range []struct {
		method, path string
		body         any
		want         int
	}{
		{"GET", "/" + id, nil, 200},
		{"PUT", "/" + id, map[string]any{"name": "Everywhere, renamed"}, 200},
		{"PATCH", "/" + id + "/toggle", nil, 200},
		{"POST", "/" + id + "/take-over", nil, 200},
		{"GET", "/" + id + "/executions", nil, 200},
		{"DELETE", "/" + id, nil, 204},
		{"GET", "/" + id, nil, 404},
	} {
		r := h.Do(c.method, "/api/v1/admin/automation/rules"+c.path, c.body, admin.Access)
		require.Equal(t, c.want, r.Status, "%s %s: %s", c.method, c.path, r.Body)
	}
	// A SYSTEM rule is not reachable through a project either.
	r = h.Do("POST", "/api/v1/admin/automation/rules", map[string]any{"name": "S", "triggerType": "ISSUE_CREATED"}, admin.Access)
	require.Equal(t, http.StatusCreated, r.Status)
	r = h.Do("GET", autoRules(f, "/"+r.JSON(t)["id"].(string)), nil, f.Owner.Access)
	require.Equal(t, http.StatusNotFound, r.Status)
}

// TestAutomationRuleValidation: one request with a problem in every part is refused
// whole, each problem named by its member path, and nothing is stored.
func TestAutomationRuleValidation(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	other := apitest.NewProject(t, h) // its statuses are of another workflow
	inactive := h.Register("Gone")
	_, err := h.DB.Pool.Exec(t.Context(), "UPDATE users SET active = false WHERE id = $1", inactive.ID)
	require.NoError(t, err)

	body := map[string]any{
		"name": strings.Repeat("n", 256), "triggerType": "STATUS_CHANGED",
		"triggerPayload": map[string]any{"toStatusId": other.Done.String(), "priority": "HIGH"},
		"rootGroupLogic": "XOR",
		"conditions": []any{
			map[string]any{"type": "COLOR", "operator": "IS", "params": map[string]any{"value": "red"}},
			map[string]any{"type": "PRIORITY", "operator": "GT", "params": map[string]any{"value": "1"}},
			map[string]any{"type": "STORY_POINTS", "operator": "LT", "params": map[string]any{"value": "a lot"}},
		},
		"childGroups": []any{map[string]any{"logic": "AND", "childGroups": []any{map[string]any{"conditions": []any{
			map[string]any{"type": "ASSIGNEE", "operator": "IS", "params": map[string]any{"value": "nobody"}},
			map[string]any{"type": "STATUS", "operator": "CONTAINS", "params": map[string]any{"value": f.Todo.String() + "," + other.Todo.String()}},
			map[string]any{"type": "ISSUE_TYPE", "operator": "EQUALS", "params": map[string]any{"value": "BUG"}},
			map[string]any{"type": "PRIORITY", "operator": "IS", "params": map[string]any{"value": map[string]any{"nested": true}}},
		}}}}},
		"actions": []any{
			map[string]any{"type": "SET_STATUS", "params": map[string]any{"statusId": other.Prog.String()}},
			map[string]any{"type": "SET_STATUS", "params": map[string]any{"statusId": "42"}},
			map[string]any{"type": "SET_ASSIGNEE", "params": map[string]any{"assigneeId": f.Outsider.ID.String()}},
			map[string]any{"type": "SEND_NOTIFICATION", "params": map[string]any{"recipientId": inactive.ID.String()}},
			map[string]any{"type": "CREATE_COMMENT", "params": map[string]any{}},
			map[string]any{"type": "SET_PRIORITY", "params": map[string]any{"priority": "URGENT"}},
			map[string]any{"type": "CREATE_SUBTASK", "position": -1, "params": map[string]any{"title": strings.Repeat("t", 256)}},
			map[string]any{"type": "DELETE_ISSUE"},
		},
	}
	// An unknown enum value is BAD_REQUEST INVALID_ENUM naming the first such member, as
	// on every other endpoint.
	enum := apitest.RequireProblem(t, h.Do("POST", autoRules(f, ""), body, f.Owner.Access),
		http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_ENUM"))
	require.Contains(t, enum["message"], "rootGroupLogic")
	require.Contains(t, enum["message"], "AND")

	// With known values every other problem is named at once.
	conds := body["conditions"].([]any)
	body["rootGroupLogic"] = "AND"
	conds[0].(map[string]any)["type"] = "PRIORITY"
	conds[0].(map[string]any)["params"] = map[string]any{"value": "HIGH"}
	inner := body["childGroups"].([]any)[0].(map[string]any)["childGroups"].([]any)[0].(map[string]any)["conditions"].([]any)
	inner[2].(map[string]any)["operator"] = "IS"
	acts := body["actions"].([]any)
	acts[5].(map[string]any)["params"] = map[string]any{"priority": "HIGH"}
	body["actions"] = acts[:7]
	got := autoProblems(t, h.Do("POST", autoRules(f, ""), body, f.Owner.Access))
	require.Equal(t, map[string]string{
		"name":                       "LENGTH",
		"triggerPayload.priority":    "UNKNOWN_KEY",
		"triggerPayload.toStatusId":  "NOT_IN_WORKFLOW",
		"conditions[1].operator":     "NOT_NUMERIC",
		"conditions[2].params.value": "NUMBER",
		"childGroups[0].childGroups[0].conditions[0].params.value": "INVALID_UUID",
		"childGroups[0].childGroups[0].conditions[1].params.value": "NOT_IN_WORKFLOW",
		"childGroups[0].childGroups[0].conditions[3].params.value": "WRONG_TYPE",
		"actions[0].params.statusId":                               "NOT_IN_WORKFLOW",
		"actions[1].params.statusId":                               "INVALID_UUID",
		"actions[2].params.assigneeId":                             "NOT_A_MEMBER",
		"actions[3].params.recipientId":                            "NOT_ACTIVE_USER",
		"actions[4].params.body":                                   "REQUIRED",
		"actions[6].position":                                      "MIN",
		"actions[6].params.title":                                  "LENGTH",
	}, got)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM automation_rules WHERE project_id = $1", f.ProjectID), "bad input changes nothing")

	// Missing members and malformed JSON are BAD_REQUEST, as everywhere.
	for _, c := range []struct {
		body   any
		reason string
	}{
		{map[string]any{"triggerType": "ISSUE_CREATED"}, "MISSING_FIELD"},
		{map[string]any{"name": "x"}, "MISSING_FIELD"},
		{`{"name": "x", "triggerType": 5}`, "WRONG_TYPE"},
		{`{"name": "x"`, "MALFORMED_JSON"},
	} {
		r := h.Do("POST", autoRules(f, ""), c.body, f.Owner.Access)
		require.Equal(t, http.StatusBadRequest, r.Status, "%v: %s", c.body, r.Body)
		require.Equal(t, c.reason, r.JSON(t)["reason"], "%v", c.body)
	}
	apitest.RequireProblem(t, h.Do("POST", autoRules(f, ""), map[string]any{"name": "x", "triggerType": "ISSUE_MOVED"}, f.Owner.Access),
		http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_ENUM"))
	require.Equal(t, map[string]string{"triggerPayload": "JSON"},
		autoProblems(t, h.Do("POST", autoRules(f, ""), map[string]any{"name": "x", "triggerType": "ISSUE_CREATED", "triggerPayload": "{not json"}, f.Owner.Access)))
}

// TestAutomationRuleLimits: 20 levels, 200 conditions and 50 actions are accepted; one
// more of any is refused (400) before anything else is looked at.
func TestAutomationRuleLimits(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	nest := func(levels int) map[string]any {
		// levels counts the root; the innermost group holds one condition.
		g := map[string]any{"logic": "AND", "conditions": []any{
			map[string]any{"type": "ISSUE_TYPE", "operator": "IS", "params": map[string]any{"value": "BUG"}}}}
		for i := 2; i < levels; i++ {
			g = map[string]any{"logic": "OR", "childGroups": []any{g}}
		}
		return map[string]any{"name": "deep", "triggerType": "ISSUE_CREATED", "childGroups": []any{g}}
	}
	conds := func(n int) map[string]any {
		cs := make([]any, n)
		for i := range cs {
			cs[i] = map[string]any{"type": "PRIORITY", "operator": "IS", "params": map[string]any{"value": "HIGH"}}
		}
		return map[string]any{"name": "wide", "triggerType": "ISSUE_CREATED", "conditions": cs}
	}
	acts := func(n int) map[string]any {
		as := make([]any, n)
		for i := range as {
			as[i] = map[string]any{"type": "SET_PRIORITY", "params": map[string]any{"priority": "HIGH"}}
		}
		return map[string]any{"name": "busy", "triggerType": "ISSUE_CREATED", "actions": as}
	}

	rule := autoRule(f, t, nest(20))
	depth, g := 1, rule["rootGroup"].(map[string]any)
	for len(g["childGroups"].([]any)) > 0 {
		g, depth = g["childGroups"].([]any)[0].(map[string]any), depth+1
	}
	require.Equal(t, 20, depth)
	require.Len(t, g["conditions"], 1)
	require.Len(t, autoRule(f, t, conds(200))["rootGroup"].(map[string]any)["conditions"], 200)
	require.Len(t, autoRule(f, t, acts(50))["actions"], 50)

	deep := autoProblems(t, h.Do("POST", autoRules(f, ""), nest(21), f.Owner.Access))
	require.Len(t, deep, 1)
	for field, code := range deep {
		require.Equal(t, "DEPTH", code)
		require.Equal(t, 20, strings.Count(field, "childGroups[0]"), field)
	}
	require.Equal(t, map[string]string{"conditions": "TOO_MANY"}, autoProblems(t, h.Do("POST", autoRules(f, ""), conds(201), f.Owner.Access)))
	require.Equal(t, map[string]string{"actions": "TOO_MANY"}, autoProblems(t, h.Do("POST", autoRules(f, ""), acts(51), f.Owner.Access)))

	// A hostile tree far past the limit is refused cheaply, as one problem.
	huge := nest(2000)
	raw, err := json.Marshal(huge)
	require.NoError(t, err)
	got := autoProblems(t, h.Do("POST", autoRules(f, ""), raw, f.Owner.Access))
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, got[k])
	}
	sort.Strings(keys)
	require.Equal(t, []string{"DEPTH"}, keys)
	require.Equal(t, 3, h.Count("SELECT count(*) FROM automation_rules WHERE project_id = $1", f.ProjectID))
}
