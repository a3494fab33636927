package automation_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestAutomationRuleUpdateIsWhole: PUT replaces the members sent (trigger, filters,
// tree, actions, enabled) and keeps the others; `{name}` alone still renames; the
// result is validated whole; every create, update, toggle and delete is audited.
func TestAutomationRuleUpdateIsWhole(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	apitest.SetAuditLevel(t, h, "WRITE", true)
	rule := autoRule(f.Project, t, map[string]any{"name": "Triage", "triggerType": "ISSUE_CREATED",
		"conditions": []any{map[string]any{"type": "PRIORITY", "operator": "IS", "params": map[string]any{"value": "LOW"}}},
		"actions":    []any{autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"})}})
	id := rule["id"].(string)
	path := autoRules(f.Project, "/"+id)

	// A rename keeps the tree and the actions.
	r := h.Do("PUT", path, map[string]any{"name": "Triage (renamed)"}, f.Owner.Access)
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
			autoAction("SEND_NOTIFICATION", map[string]any{"message": "look"})}}, f.Owner.Access)
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
	require.Equal(t, got, h.Do("GET", path, nil, f.Viewer.Access).JSON(t), "as it reads back")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM automation_groups WHERE rule_id = $1 AND parent_group_id IS NOT NULL", id))
	require.Equal(t, 2, h.Count("SELECT count(*) FROM automation_actions WHERE rule_id = $1", id))

	// Validated whole: nothing changes when a member is wrong.
	// (An unknown enum value is 400 INVALID_ENUM, as everywhere; it names the first one.)
	apitest.RequireProblem(t, h.Do("PUT", path, map[string]any{"triggerPayload": map[string]any{"priority": "URGENT"},
		"actions": []any{autoAction("EXPLODE", nil)}}, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_ENUM"))
	apitest.RequireProblem(t, h.Do("PUT", path, map[string]any{"triggerType": "NEVER"}, f.Owner.Access),
		400, "BAD_REQUEST", apitest.Reason("INVALID_ENUM"))
	require.Equal(t, map[string]string{"triggerPayload.priority": "UNKNOWN_KEY"},
		autoProblems(t, h.Do("PUT", path, map[string]any{"triggerType": "ISSUE_CREATED"}, f.Owner.Access)),
		"a trigger whose filters no longer fit is refused whole")
	require.Equal(t, "PRIORITY_CHANGED", h.Do("GET", path, nil, f.Viewer.Access).JSON(t)["triggerType"])

	// Enabled is a member like the others; null clears the filters.
	r = h.Do("PUT", path, map[string]any{"enabled": false, "triggerPayload": nil}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, false, r.JSON(t)["enabled"])
	require.Nil(t, r.JSON(t)["triggerPayload"])
	require.Len(t, r.JSON(t)["actions"], 2)

	require.Equal(t, http.StatusOK, h.Do("PATCH", path+"/toggle", nil, f.Owner.Access).Status)
	require.Equal(t, http.StatusOK, h.Do("PATCH", path+"/toggle", nil, f.Owner.Access).Status)
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", path, nil, f.Owner.Access).Status)
	autoDrain(t, h)
	audited := func(action string) int {
		return h.Count(`SELECT count(*) FROM audit_events WHERE action = $1 AND resource_type = 'AUTOMATION_RULE'
			AND resource_id = $2 AND user_id = $3 AND project_id = $4`, action, id, f.Owner.ID, f.ProjectID)
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
	h := f.H
	rule := autoRule(f.Project, t, map[string]any{"name": "Bugs up", "triggerType": "ISSUE_CREATED",
		"conditions": []any{map[string]any{"type": "ISSUE_TYPE", "operator": "IS", "params": map[string]any{"value": "BUG"}}},
		"actions":    []any{autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"})}})
	id := rule["id"].(string)
	bug, _ := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "A bug", "type": "BUG"})
	task1, _ := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "A task"})
	task2, _ := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Another task"})
	autoDrain(t, h)
	list := func(query string) []string {
		r := h.Do("GET", autoRules(f.Project, "/"+id+"/executions?"+query), nil, f.Viewer.Access)
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

	r := h.Do("GET", autoRules(f.Project, "/"+id+"/executions?status=DONE"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.Equal(t, "INVALID_ENUM", r.JSON(t)["reason"])
	r = h.Do("GET", autoRules(f.Project, "/"+id+"/executions?issueId=nope"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.Equal(t, "INVALID_UUID", r.JSON(t)["reason"])
}

// TestAutomationSendWebhook: a SEND_WEBHOOK rule POSTs the rule, event and issue in the
// webhook envelope, signed with its secret, retried on the webhook schedule after a
// failed attempt and logged on the rule; the secret is never returned; a private
// address is refused at save unless TW_WEBHOOK_ALLOW_PRIVATE.
func TestAutomationSendWebhook(t *testing.T) {
	t.Parallel()
	h := apitest.WebhookHarness(t, 200*time.Millisecond)
	f := apitest.NewSprintProject(t, h)
	h.StartWorkers()
	recv := apitest.NewReceiver(t, h, func(n int) int {
		if n == 1 {
			return http.StatusBadGateway
		}
		return http.StatusNoContent
	})
	const secret = "s3cret-of-the-rule"
	rule := autoRule(f.Project, t, map[string]any{"name": "Tell the bot", "triggerType": "ISSUE_CREATED",
		"actions": []any{autoAction("SEND_WEBHOOK", map[string]any{"url": recv.URL(), "secret": secret})}})
	id := rule["id"].(string)
	params := rule["actions"].([]any)[0].(map[string]any)["params"].(map[string]any)
	require.Equal(t, map[string]any{"url": recv.URL(), "secret": "********"}, params, "the secret is masked")
	for _, path := range []string{autoRules(f.Project, "/"+id), autoRules(f.Project, "?size=200")} {
		r := h.Do("GET", path, nil, f.Viewer.Access)
		require.NotContains(t, string(r.Body), secret)
	}

	issueID, key := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Hook me"})
	hits := recv.Wait(t, 2, 30*time.Second)
	require.Len(t, hits, 2)
	for _, hit := range hits {
		apitest.VerifySignature(t, hit, secret)
		require.Equal(t, "automation.rule_fired", hit.Header.Get("X-Taskweave-Event"))
	}
	require.Equal(t, hits[0].Header.Get("X-Taskweave-Delivery"), hits[1].Header.Get("X-Taskweave-Delivery"), "one delivery, retried")
	require.GreaterOrEqual(t, hits[1].At.Sub(hits[0].At), 200*time.Millisecond, "after the schedule's delay")
	var body struct {
		Event      string `json:"event"`
		ProjectKey string `json:"projectKey"`
		ID         string `json:"id"`
		Data       struct {
			Rule  map[string]any `json:"rule"`
			Event map[string]any `json:"event"`
			Issue map[string]any `json:"issue"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(hits[0].Body, &body))
	require.Equal(t, "automation.rule_fired", body.Event)
	require.Equal(t, f.Key, body.ProjectKey)
	require.Equal(t, hits[0].Header.Get("X-Taskweave-Delivery"), body.ID)
	require.Equal(t, map[string]any{"id": id, "name": "Tell the bot"}, body.Data.Rule)
	require.Equal(t, "ISSUE_CREATED", body.Data.Event["type"])
	require.Equal(t, []any{issueID, key, "Hook me"}, []any{body.Data.Issue["issueId"], body.Data.Issue["issueKey"], body.Data.Issue["title"]})

	// The log on the rule: one delivery, delivered at the second attempt.
	var d map[string]any
	apitest.Eventually(t, 10*time.Second, func() bool {
		r := h.Do("GET", autoRules(f.Project, "/"+id+"/deliveries"), nil, f.Owner.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		content := r.JSON(t)["content"].([]any)
		require.Len(t, content, 1)
		d = content[0].(map[string]any)
		return d["status"] == "DELIVERED"
	}, "delivery recorded")
	require.Equal(t, float64(2), d["attempts"])
	require.Equal(t, float64(204), d["responseStatus"])
	require.Equal(t, issueID, d["issueId"])
	require.Equal(t, recv.URL(), d["url"])
	require.NotNil(t, d["deliveredAt"])
	require.Equal(t, body.ID, d["id"])
	require.NotContains(t, fmt.Sprint(d), secret)
	require.Equal(t, http.StatusForbidden, h.Do("GET", autoRules(f.Project, "/"+id+"/deliveries"), nil, f.Member.Access).Status)
	autoDrain(t, h)
	require.Equal(t, []string{"SUCCESS " + issueID + " ran SEND_WEBHOOK"}, autoOutcomes(autoExecutions(f.Project, t, id)))

	// The mask sent back keeps the secret; a new secret replaces it.
	r := h.Do("PUT", autoRules(f.Project, "/"+id), map[string]any{"actions": []any{autoAction("SEND_WEBHOOK",
		map[string]any{"url": recv.URL(), "secret": "********"})}}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM automation_actions WHERE rule_id = $1 AND params->>'secret' = $2`, id, secret))

	// Validated at save: the URL's form, its length, the secret's length.
	require.Equal(t, map[string]string{"actions[0].params.url": "URL_REJECTED", "actions[1].params.url": "REQUIRED",
		"actions[2].params.secret": "LENGTH", "actions[3].params.url": "LENGTH"},
		autoProblems(t, h.Do("POST", autoRules(f.Project, ""), map[string]any{"name": "bad", "triggerType": "ISSUE_CREATED",
			"actions": []any{autoAction("SEND_WEBHOOK", map[string]any{"url": "ftp://example.com/x"}),
				autoAction("SEND_WEBHOOK", map[string]any{}),
				autoAction("SEND_WEBHOOK", map[string]any{"url": "https://example.com", "secret": strings.Repeat("s", 65)}),
				autoAction("SEND_WEBHOOK", map[string]any{"url": "https://example.com/" + strings.Repeat("a", 2048)})}}, f.Owner.Access)))

	// Without TW_WEBHOOK_ALLOW_PRIVATE the address check refuses loopback.
	g := apitest.NewProject(t, apitest.New(t, apitest.Options{}))
	require.Equal(t, map[string]string{"actions[0].params.url": "URL_REJECTED"},
		autoProblems(t, g.H.Do("POST", autoRules(g, ""), map[string]any{"name": "private", "triggerType": "ISSUE_CREATED",
			"actions": []any{autoAction("SEND_WEBHOOK", map[string]any{"url": recv.URL()})}}, g.Owner.Access)))
}

// TestAutomationRuleUpdateStrict: PUT {name, actions} with a member the rule request
// does not read is 400 UNKNOWN_MEMBER under Prefer: handling=strict, naming the member
// (nested ones by path) and changing nothing; without the preference it is ignored.
func TestAutomationRuleUpdateStrict(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	rule := autoRule(f.Project, t, map[string]any{"name": "Strict", "triggerType": "ISSUE_CREATED",
		"actions": []any{autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"})}})
	path := autoRules(f.Project, "/"+rule["id"].(string))
	strict := []string{"Prefer", "handling=strict"}

	r := h.Do("PUT", path, map[string]any{"name": "Renamed", "trigger": "ISSUE_UPDATED"}, f.Owner.Access, strict...)
	m := apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("UNKNOWN_MEMBER"))
	require.Equal(t, "trigger", m["details"].(map[string]any)["field"])
	require.Equal(t, "handling=strict", r.Header.Get("Preference-Applied"))

	action := autoAction("CREATE_COMMENT", map[string]any{"body": "x"})
	action["kind"] = "CREATE_COMMENT"
	r = h.Do("PUT", path, map[string]any{"name": "Renamed", "actions": []any{action}}, f.Owner.Access, strict...)
	m = apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("UNKNOWN_MEMBER"))
	require.Equal(t, "actions[0].kind", m["details"].(map[string]any)["field"])

	r = h.Do("PUT", path, map[string]any{"name": "Renamed", "createdBy": f.Owner.ID}, f.Owner.Access, strict...)
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("READ_ONLY_MEMBER"))
	require.Equal(t, "Strict", h.Do("GET", path, nil, f.Viewer.Access).JSON(t)["name"], "refused bodies changed nothing")

	// Lenient: the unknown member is ignored, the rest applied.
	r = h.Do("PUT", path, map[string]any{"name": "Renamed", "trigger": "ISSUE_UPDATED"}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Empty(t, r.Header.Get("Preference-Applied"))
	require.Equal(t, "Renamed", r.JSON(t)["name"])
	require.Equal(t, "ISSUE_CREATED", r.JSON(t)["triggerType"])
}
