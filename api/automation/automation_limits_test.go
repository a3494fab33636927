package automation_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/workers"
)

// TestAutomationChainBudget: a rule creating three subtasks of every new issue, with a
// condition that cannot stop it (every subtask starts in the first status), fans out
// until the chain's action budget (100) is spent: at most 100 issues are created in
// all, and the executions past it say the budget was spent.
func TestAutomationChainBudget(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	sub := autoAction("CREATE_SUBTASK", map[string]any{"title": "Again"})
	rule := autoRule(f.Project, t, map[string]any{"name": "Triplicate", "triggerType": "ISSUE_CREATED",
		"conditions": []any{autoCondition("STATUS", "IS", f.Todo.String())},
		"actions":    []any{sub, sub, sub}})
	ruleID := rule["id"].(string)

	root, _ := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Seed"})
	autoDrain(t, h)

	created := h.Count("SELECT count(*) FROM issues WHERE project_id = $1 AND id <> $2", f.ProjectID, root)
	require.Equal(t, 99, created, "33 runs of 3 actions fit in the budget of 100, the 34th does not")
	require.Equal(t, 33, h.Count("SELECT count(*) FROM automation_executions WHERE rule_id = $1 AND status = 'SUCCESS'", ruleID))
	var skipped int
	for _, e := range autoExecutions(f.Project, t, ruleID) {
		if e["status"] == "SKIPPED" {
			skipped++
			require.Contains(t, e["detail"], "action budget spent")
			require.Contains(t, e["detail"], "100 actions in all (TW_AUTOMATION_CHAIN_BUDGET)")
		}
	}
	require.Equal(t, 100-33, skipped, "every issue of the chain was evaluated once; those past the budget are SKIPPED")
	require.Equal(t, float64(67), autoMetric(t, h.WorkerRegistry, "taskweave_automation_limited_total", map[string]string{"limit": "budget"}))
	require.Equal(t, float64(0), autoMetric(t, h.WorkerRegistry, "taskweave_automation_limited_total", map[string]string{"limit": "rate"}))
	require.Equal(t, 99, h.Count("SELECT actions FROM automation_chains WHERE chain_id = (SELECT (args->>'chainId')::uuid "+
		"FROM river_job WHERE kind = 'automation.evaluate' AND args->>'issueId' = $1)", root), "the chain's spent budget")

	// Another change is a chain of its own, with a budget of its own.
	_, _ = autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Second seed"})
	autoDrain(t, h)
	require.Equal(t, 66, h.Count("SELECT count(*) FROM automation_executions WHERE rule_id = $1 AND status = 'SUCCESS'", ruleID))
}

// TestAutomationSelfTriggerRefused: a rule whose own actions trigger it again without
// a condition that can stop them is refused when saved, naming the action and why; a
// condition that refuses what the rule makes lets it save.
func TestAutomationSelfTriggerRefused(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	sub := autoAction("CREATE_SUBTASK", map[string]any{"title": "Again"})
	for _, body := range []map[string]any{
		{"name": "Triplicate", "triggerType": "ISSUE_CREATED", "actions": []any{
			autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"}), sub, sub, sub}},
		{"name": "Only medium", "triggerType": "ISSUE_CREATED", "actions": []any{
			autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"}), sub},
			"conditions": []any{autoCondition("PRIORITY", "IS", "MEDIUM")}},
	} {
		r := h.Do("POST", autoRules(f, ""), body, f.Owner.Access)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
		ps := autoProblems(t, r)
		require.Equal(t, "SELF_TRIGGER", ps["actions[1].type"], "%s", r.Body)
		require.Contains(t, string(r.Body), "triggers this ISSUE_CREATED rule again")
	}
	r := h.Do("POST", autoRules(f, ""), map[string]any{"name": "Flip flop", "triggerType": "PRIORITY_CHANGED",
		"actions": []any{autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"}),
			autoAction("SET_PRIORITY", map[string]any{"priority": "LOW"})}}, f.Owner.Access)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.Equal(t, "SELF_TRIGGER", autoProblems(t, r)["actions[0].type"], "%s", r.Body)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM automation_rules WHERE project_id = $1", f.ProjectID))

	// Conditions that refuse the subtask, or one value set: these stop by themselves.
	autoRule(f, t, map[string]any{"name": "Not for subtasks", "triggerType": "ISSUE_CREATED",
		"conditions": []any{autoCondition("ISSUE_TYPE", "IS_NOT", "SUBTASK")}, "actions": []any{sub, sub, sub}})
	autoRule(f, t, map[string]any{"name": "Bugs only", "triggerType": "ISSUE_CREATED",
		"conditions": []any{autoCondition("ISSUE_TYPE", "IS", "BUG")}, "actions": []any{sub}})
	autoRule(f, t, map[string]any{"name": "Escalate", "triggerType": "PRIORITY_CHANGED",
		"actions": []any{autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"})}})
	autoRule(f, t, map[string]any{"name": "Flip unless low", "triggerType": "PRIORITY_CHANGED",
		"conditions": []any{autoCondition("PRIORITY", "IS_NOT", "LOW")},
		"actions": []any{autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"}),
			autoAction("SET_PRIORITY", map[string]any{"priority": "LOW"})}})
}

// TestAutomationProjectRate: the actions of one project's rules are counted per minute
// in Postgres, shared by every worker; past the rate a rule is SKIPPED with the reason
// and nothing of it stays, while another project's rules go on.
func TestAutomationProjectRate(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewSprintProject(t, h)
	g := apitest.NewProject(t, h)
	h.StartWorkersWith(func(c *workers.Config) { c.AutomationProjectRate = 4 })
	body := map[string]any{"name": "Two actions", "triggerType": "ISSUE_CREATED",
		"actions": []any{autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"}),
			autoAction("CREATE_COMMENT", map[string]any{"body": "Noted"})}}
	rule := autoRule(f.Project, t, body)["id"].(string)
	other := autoRule(g, t, body)["id"].(string)

	first, _ := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Within the rate"})
	autoDrain(t, h)
	require.Equal(t, []string{"SUCCESS " + first + " ran SET_PRIORITY, CREATE_COMMENT"}, autoOutcomes(autoExecutions(f.Project, t, rule)))
	require.Equal(t, 2, h.Count("SELECT sum(actions) FROM automation_project_rates WHERE project_id = $1", f.ProjectID))

	// The project's minutes (this one and the next two, so the test never straddles
	// into a fresh one) are used up, as by the other workers.
	_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO automation_project_rates (project_id, window_start, actions)
		SELECT $1, date_trunc('minute', clock_timestamp()) + make_interval(mins => m), 4 FROM generate_series(0, 2) AS m
		ON CONFLICT (project_id, window_start) DO UPDATE SET actions = 4`, f.ProjectID)
	require.NoError(t, err)
	second, key := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Past the rate"})
	elsewhere, _ := autoIssue(g, t, g.Owner, map[string]any{"title": "Another project"})
	autoDrain(t, h)

	var detail string
	for _, e := range autoExecutions(f.Project, t, rule) {
		if e["issueId"] == second {
			require.Equal(t, "SKIPPED", e["status"])
			detail = e["detail"].(string)
		}
	}
	require.True(t, strings.HasPrefix(detail, "project automation rate reached: the rules of a project may run 4 actions per minute"), detail)
	require.Equal(t, "MEDIUM", f.Get(t, key)["priority"], "nothing of the skipped rule stays")
	require.Empty(t, autoComments(t, h, second))
	require.Equal(t, []string{"SUCCESS " + elsewhere + " ran SET_PRIORITY, CREATE_COMMENT"}, autoOutcomes(autoExecutions(g, t, other)))
}
