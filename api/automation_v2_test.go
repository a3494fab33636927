package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAutomationRuleUpdateIsWhole: PUT replaces the members sent (trigger, filters,
// tree, actions, enabled) and keeps the others; `{name}` alone still renames; the
// result is validated whole; every create, update, toggle and delete is audited.
func TestAutomationRuleUpdateIsWhole(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.h
	setAuditLevel(t, h, "WRITE", true)
	rule := f.autoRule(t, map[string]any{"name": "Triage", "triggerType": "ISSUE_CREATED",
		"conditions": []any{map[string]any{"type": "PRIORITY", "operator": "IS", "params": map[string]any{"value": "LOW"}}},
		"actions":    []any{autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"})}})
	id := rule["id"].(string)
	path := f.autoRules("/" + id)

	// A rename keeps the tree and the actions.
	r := h.Do("PUT", path, map[string]any{"name": "Triage (renamed)"}, f.owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	got := r.JSON(t)
	require.Equal(t, "Triage (renamed)", got["name"])
	require.Len(t, got["rootGroup"].(map[string]any)["conditions"], 1)
	require.Len(t, got["actions"], 1)

	// The whole rule: another trigger with a filter, another tree, other actions.
	r = h.Do("PUT", path, map[string]any{"triggerType": "PRIORITY_CHANGED", "triggerPayload": map[string]any{"priority": "CRITICAL"},
		"rootGroupLogic": "OR", "conditions": []any{}, "childGroups": []any{map[string]any{"logic": "AND",
			"conditions": []any{map[string]any{"type": "ISSUE_TYPE", "operator": "IS", "params": map[string]any{"value": "BUG"}}}}},
		"actions": []any{autoAction("CREATE_COMMENT", map[string]any{"body": "Escalated"}),
			autoAction("SEND_NOTIFICATION", map[string]any{"message": "look"})}}, f.owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	got = r.JSON(t)
	require.Equal(t, "Triage (renamed)", got["name"], "absent members keep their values")
	require.Equal(t, "PRIORITY_CHANGED", got["triggerType"])
	require.Equal(t, `{"priority":"CRITICAL"}`, got["triggerPayload"])
	root := got["rootGroup"].(map[string]any)
	require.Equal(t, "OR", root["logic"])
	require.Empty(t, root["conditions"])
	require.Len(t, root["childGroups"], 1)
	require.Equal(t, []any{"CREATE_COMMENT", "SEND_NOTIFICATION"}, []any{got["actions"].([]any)[0].(map[string]any)["type"],
		got["actions"].([]any)[1].(map[string]any)["type"]})
	require.Equal(t, true, got["enabled"])
	require.Equal(t, got, h.Do("GET", path, nil, f.viewer.Access).JSON(t), "as it reads back")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM automation_groups WHERE rule_id = $1 AND parent_group_id IS NOT NULL", id))
	require.Equal(t, 2, h.Count("SELECT count(*) FROM automation_actions WHERE rule_id = $1", id))

	// Validated whole: nothing changes when a member is wrong.
	require.Equal(t, map[string]string{"actions[0].type": "ENUM", "triggerPayload.priority": "ENUM"},
		autoProblems(t, h.Do("PUT", path, map[string]any{"triggerPayload": map[string]any{"priority": "URGENT"},
			"actions": []any{autoAction("EXPLODE", nil)}}, f.owner.Access)))
	require.Equal(t, map[string]string{"triggerType": "ENUM", "triggerPayload.priority": "UNKNOWN_KEY"},
		autoProblems(t, h.Do("PUT", path, map[string]any{"triggerType": "NEVER"}, f.owner.Access)))
	require.Equal(t, "PRIORITY_CHANGED", h.Do("GET", path, nil, f.viewer.Access).JSON(t)["triggerType"])

	// Enabled is a member like the others; null clears the filters.
	r = h.Do("PUT", path, map[string]any{"enabled": false, "triggerPayload": nil}, f.owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, false, r.JSON(t)["enabled"])
	require.Nil(t, r.JSON(t)["triggerPayload"])
	require.Len(t, r.JSON(t)["actions"], 2)

	require.Equal(t, http.StatusOK, h.Do("PATCH", path+"/toggle", nil, f.owner.Access).Status)
	require.Equal(t, http.StatusOK, h.Do("PATCH", path+"/toggle", nil, f.owner.Access).Status)
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", path, nil, f.owner.Access).Status)
	autoDrain(t, h)
	audited := func(action string) int {
		return h.Count(`SELECT count(*) FROM audit_events WHERE action = $1 AND resource_type = 'AUTOMATION_RULE'
			AND resource_id = $2 AND user_id = $3 AND project_id = $4`, action, id, f.owner.ID, f.projectID)
	}
	require.Equal(t, []int{1, 3, 2, 1}, []int{audited("AUTOMATION_RULE_CREATED"), audited("AUTOMATION_RULE_UPDATED"),
		audited("AUTOMATION_RULE_TOGGLED"), audited("AUTOMATION_RULE_DELETED")})
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM audit_events WHERE action = 'AUTOMATION_RULE_UPDATED' AND resource_id = $1
		AND details::jsonb->>'previousName' = 'Triage' AND details::jsonb->>'ruleName' = 'Triage (renamed)'`, id))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM audit_events WHERE action = 'AUTOMATION_RULE_DELETED' AND resource_id = $1
		AND details::jsonb->>'ruleName' = 'Triage (renamed)'`, id))
}

// TestAutomationExecutionsFilter: the execution log filters by status and by issue;
// a bad value of either is BAD_REQUEST naming it.
func TestAutomationExecutionsFilter(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.h
	rule := f.autoRule(t, map[string]any{"name": "Bugs up", "triggerType": "ISSUE_CREATED",
		"conditions": []any{map[string]any{"type": "ISSUE_TYPE", "operator": "IS", "params": map[string]any{"value": "BUG"}}},
		"actions":    []any{autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"})}})
	id := rule["id"].(string)
	bug, _ := f.autoIssue(t, f.owner, map[string]any{"title": "A bug", "type": "BUG"})
	task1, _ := f.autoIssue(t, f.owner, map[string]any{"title": "A task"})
	task2, _ := f.autoIssue(t, f.owner, map[string]any{"title": "Another task"})
	autoDrain(t, h)
	list := func(query string) []string {
		r := h.Do("GET", f.autoRules("/"+id+"/executions?"+query), nil, f.viewer.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var out []map[string]any
		for _, e := range r.JSON(t)["content"].([]any) {
			out = append(out, e.(map[string]any))
		}
		require.Equal(t, float64(len(out)), r.JSON(t)["totalElements"])
		return autoOutcomes(out)
	}
	require.Len(t, list(""), 3)
	require.Equal(t, []string{"SUCCESS " + bug + " ran SET_PRIORITY"}, list("status=SUCCESS"))
	require.Equal(t, autoSorted("SKIPPED "+task1+" conditions not met", "SKIPPED "+task2+" conditions not met"), list("status=SKIPPED"))
	require.Empty(t, list("status=FAILED"))
	require.Equal(t, []string{"SKIPPED " + task2 + " conditions not met"}, list("issueId="+task2))
	require.Empty(t, list("issueId="+task2+"&status=SUCCESS"))

	r := h.Do("GET", f.autoRules("/"+id+"/executions?status=DONE"), nil, f.viewer.Access)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.Equal(t, "INVALID_ENUM", r.JSON(t)["reason"])
	r = h.Do("GET", f.autoRules("/"+id+"/executions?issueId=nope"), nil, f.viewer.Access)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.Equal(t, "INVALID_UUID", r.JSON(t)["reason"])
}
