package automation_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/pipeline"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/workers"
)

// autoMetric reads one series of the workers' registry: a counter by its labels, or a
// histogram's sample count.
func autoMetric(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

// autoDepths is "STATUS depth" of a rule's executions, by depth.
func autoDepths(t *testing.T, h *apitest.Harness, ruleID string) []string {
	t.Helper()
	rows, err := h.DB.Pool.Query(context.Background(), `SELECT status || ' ' || chain_depth FROM automation_executions
		WHERE rule_id = $1 ORDER BY chain_depth`, ruleID)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestAutomationLoopStops: two rules bouncing an issue between two statuses run until
// the chain depth limit, then the next evaluation is recorded as SKIPPED and nothing
// more happens.
func TestAutomationLoopStops(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	back := autoRule(f.Project, t, map[string]any{"name": "Back to do", "triggerType": "STATUS_CHANGED",
		"triggerPayload": map[string]any{"toStatusId": f.Prog.String()},
		"actions":        []any{autoAction("SET_STATUS", map[string]any{"statusId": f.Todo.String()})}})
	forth := autoRule(f.Project, t, map[string]any{"name": "Forth to progress", "triggerType": "STATUS_CHANGED",
		"triggerPayload": map[string]any{"toStatusId": f.Todo.String()},
		"actions":        []any{autoAction("SET_STATUS", map[string]any{"statusId": f.Prog.String()})}})

	id, key := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Ping pong"})
	f.Patch(t, key, map[string]any{"statusId": f.Prog.String()})
	autoDrain(t, h)

	require.Equal(t, []string{"SUCCESS 0", "SUCCESS 2", "SUCCESS 4", "SKIPPED 6"}, autoDepths(t, h, back["id"].(string)))
	require.Equal(t, []string{"SUCCESS 1", "SUCCESS 3", "SUCCESS 5"}, autoDepths(t, h, forth["id"].(string)))
	var detail string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		"SELECT detail FROM automation_executions WHERE rule_id = $1 AND status = 'SKIPPED'", back["id"]).Scan(&detail))
	require.Contains(t, detail, "chain depth limit 5")
	require.Equal(t, f.Prog.String(), f.Get(t, key)["statusId"], "the last change (depth 5) stands")
	require.Equal(t, 7, h.Count("SELECT count(*) FROM issue_activities WHERE issue_id = $1 AND type = 'STATUS_CHANGED'", id))
	require.Equal(t, 7, h.Count("SELECT count(*) FROM river_job WHERE kind = 'automation.evaluate'"), "one job per change, none after the limit")
}

// TestAutomationRefusalFailsOnlyItsRule: a SET_STATUS the workflow's guard refuses
// marks its rule FAILED with the reason and rolls back the rule's earlier actions; the
// other rule of the same event still acts. The metrics count both.
func TestAutomationRefusalFailsOnlyItsRule(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	r := h.Do("POST", f.Path("/workflow/transitions"), map[string]any{"fromStatusId": nil, "toStatusId": f.Done}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r = h.Do("PUT", f.Path("/workflow/transitions/"+r.JSON(t)["id"].(string)+"/guards"),
		map[string]any{"guards": []any{map[string]any{"type": "REQUIRED_FIELD", "field": "assigneeId"}}}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	closer := autoRule(f.Project, t, map[string]any{"name": "Close at once", "triggerType": "ISSUE_CREATED",
		"actions": []any{autoAction("CREATE_COMMENT", map[string]any{"body": "Closing"}),
			autoAction("SET_STATUS", map[string]any{"statusId": f.Done.String()})}})
	bumper := autoRule(f.Project, t, map[string]any{"name": "Bump", "triggerType": "ISSUE_CREATED",
		"actions": []any{autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"})}})

	id, key := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Unassigned"})
	autoDrain(t, h)

	require.Equal(t, []string{"FAILED " + id + " actions[1] SET_STATUS: workflow: required field assigneeId is empty"},
		autoOutcomes(autoExecutions(f.Project, t, closer["id"].(string))))
	require.Empty(t, autoComments(t, h, id), "the failed rule's comment was rolled back with it")
	require.Equal(t, f.Todo.String(), f.Get(t, key)["statusId"])
	require.Equal(t, []string{"SUCCESS " + id + " ran SET_PRIORITY"}, autoOutcomes(autoExecutions(f.Project, t, bumper["id"].(string))))
	require.Equal(t, "HIGH", f.Get(t, key)["priority"])

	reg := h.WorkerRegistry
	ev := "taskweave_automation_evaluations_total"
	require.Equal(t, float64(1), autoMetric(t, reg, ev, map[string]string{"trigger": "ISSUE_CREATED", "outcome": "failed"}))
	require.Equal(t, float64(1), autoMetric(t, reg, ev, map[string]string{"trigger": "ISSUE_CREATED", "outcome": "success"}))
	require.Equal(t, float64(0), autoMetric(t, reg, ev, map[string]string{"trigger": "SPRINT_STARTED", "outcome": "skipped"}), "series exist at 0")
	act := "taskweave_automation_actions_total"
	require.Equal(t, float64(1), autoMetric(t, reg, act, map[string]string{"type": "CREATE_COMMENT", "outcome": "failed"}))
	require.Equal(t, float64(1), autoMetric(t, reg, act, map[string]string{"type": "SET_STATUS", "outcome": "failed"}))
	require.Equal(t, float64(1), autoMetric(t, reg, act, map[string]string{"type": "SET_PRIORITY", "outcome": "success"}))
	require.Equal(t, float64(0), autoMetric(t, reg, act, map[string]string{"type": "SEND_NOTIFICATION", "outcome": "success"}))
	// One latency per execution: both rules of the create, and the priority change's
	// evaluation finds no rule (none listens to PRIORITY_CHANGED: no job at all).
	require.Equal(t, float64(2), autoMetric(t, reg, "taskweave_automation_event_latency_seconds", nil))
}

// TestAutomationSystemRuleOtherWorkflow: a SYSTEM rule acts in every project; where
// its SET_STATUS names a status of another workflow, that execution is SKIPPED with
// the reason.
func TestAutomationSystemRuleOtherWorkflow(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	g := apitest.NewProject(t, h)
	admin := h.Register("Ada")
	h.MakeAdmin(admin)
	r := h.Do("POST", "/api/v1/admin/automation/rules", map[string]any{"name": "Start G's work", "triggerType": "ISSUE_CREATED",
		"actions": []any{autoAction("SET_STATUS", map[string]any{"statusId": g.Prog.String()})}}, admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	ruleID := r.JSON(t)["id"].(string)

	fID, _ := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "In F"})
	gID, gKey := autoIssue(g, t, g.Owner, map[string]any{"title": "In G"})
	autoDrain(t, h)

	require.Equal(t, g.Prog.String(), g.Get(t, gKey)["statusId"])
	r = h.Do("GET", "/api/v1/admin/automation/rules/"+ruleID+"/executions", nil, admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var execs []map[string]any
	for _, e := range r.JSON(t)["content"].([]any) {
		execs = append(execs, e.(map[string]any))
	}
	require.Equal(t, autoSorted(
		"SKIPPED "+fID+" status "+g.Prog.String()+" is not in the workflow of project "+f.Key,
		"SUCCESS "+gID+" ran SET_STATUS",
	), autoOutcomes(execs))
}

// TestAutomationExactlyOnce: the same evaluation job run twice one after the other (a
// retry after a commit), and twice at the same time (a rescued job beside the
// original), applies each rule's actions once and writes one execution each.
func TestAutomationExactlyOnce(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{}) // no workers: this test runs the jobs itself
	f := apitest.NewProject(t, h)
	rule := autoRule(f, t, map[string]any{"name": "Once", "triggerType": "ISSUE_CREATED",
		"conditions": []any{autoCondition("ISSUE_TYPE", "IS_NOT", "SUBTASK")},
		"actions": []any{autoAction("CREATE_COMMENT", map[string]any{"body": "Once only"}),
			autoAction("CREATE_SUBTASK", map[string]any{"title": "One subtask"}),
			autoAction("SEND_NOTIFICATION", map[string]any{"recipientId": f.Member.ID.String()})}})
	seq, _ := autoIssue(f, t, f.Owner, map[string]any{"title": "Sequential"})
	con, _ := autoIssue(f, t, f.Owner, map[string]any{"title": "Concurrent"})

	inserter, err := jobs.NewInserter(h.DB.SQL, nil)
	require.NoError(t, err)
	w := workers.NewAutomationEvaluateWorker(workers.Deps{DB: h.DB, Registry: prometheus.NewRegistry(),
		Bus: pipeline.New(inserter, pipeline.Config{}).Bus})
	job := func(issueID string) *river.Job[jobs.AutomationEvaluate] {
		var id int64
		var raw []byte
		require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `SELECT id, args FROM river_job
			WHERE kind = 'automation.evaluate' AND args->>'issueId' = $1`, issueID).Scan(&id, &raw))
		var args jobs.AutomationEvaluate
		require.NoError(t, json.Unmarshal(raw, &args))
		return &river.Job[jobs.AutomationEvaluate]{JobRow: &rivertype.JobRow{ID: id, Attempt: 1, Kind: args.Kind()}, Args: args}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	j := job(seq)
	require.NoError(t, w.Work(ctx, j))
	require.NoError(t, w.Work(ctx, j))

	j = job(con)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = w.Work(ctx, j) }()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])

	for _, issueID := range []string{seq, con} {
		require.Equal(t, []string{"Automation: Once only"}, autoComments(t, h, issueID), "one comment")
		require.Equal(t, 1, h.Count("SELECT count(*) FROM issues WHERE parent_id = $1", issueID), "one subtask")
		require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND args->>'type' = 'AUTOMATION'
			AND args->>'issueId' = $1`, issueID), "one notification job")
		require.Equal(t, 1, h.Count("SELECT count(*) FROM automation_executions WHERE rule_id = $1 AND issue_id = $2 AND status = 'SUCCESS'",
			rule["id"], issueID))
	}
}

// TestAutomationExecutionRetention: cleanup deletes executions past the retention, in
// batches, and keeps the younger ones.
func TestAutomationExecutionRetention(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	rule := autoRule(f, t, map[string]any{"name": "Logged", "triggerType": "ISSUE_CREATED"})
	_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO automation_executions (rule_id, event_id, event_type, status, created_at)
		SELECT $1, gen_random_uuid(), 'ISSUE_CREATED', 'SUCCESS', now() - make_interval(days => d)
		FROM generate_series(1, 10) AS d, generate_series(1, 3)`, rule["id"])
	require.NoError(t, err)
	n, err := automation.Cleanup(context.Background(), h.DB.Bun, 7*24*time.Hour+time.Hour, 2)
	require.NoError(t, err)
	require.EqualValues(t, 9, n, "days 8, 9 and 10, three each")
	require.Equal(t, 21, h.Count("SELECT count(*) FROM automation_executions WHERE rule_id = $1", rule["id"]))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM automation_executions WHERE created_at < now() - interval '7 days 1 hour'"))
	require.Len(t, autoExecutions(f, t, rule["id"].(string)), 21)
}

// TestAutomationRuleChangesReachRunningWorkers: the workers keep the rules they read,
// yet a rule disabled, enabled, added or deleted counts from the next event on.
func TestAutomationRuleChangesReachRunningWorkers(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	first := autoRule(f.Project, t, map[string]any{"name": "First", "triggerType": "ISSUE_CREATED"})["id"].(string)
	fired := func(title string) []string {
		t.Helper()
		id, _ := autoIssue(f.Project, t, f.Owner, map[string]any{"title": title})
		autoDrain(t, h)
		rows, err := h.DB.Pool.Query(context.Background(), `SELECT r.name FROM automation_executions AS e
			JOIN automation_rules AS r ON r.id = e.rule_id WHERE e.issue_id = $1 ORDER BY r.name`, id)
		require.NoError(t, err)
		out := []string{}
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			out = append(out, n)
		}
		require.NoError(t, rows.Err())
		return out
	}
	require.Equal(t, []string{"First"}, fired("one"))
	require.Equal(t, http.StatusOK, h.Do("PATCH", autoRules(f.Project, "/"+first+"/toggle"), nil, f.Owner.Access).Status)
	require.Equal(t, []string{}, fired("two"), "disabled")
	require.Equal(t, http.StatusOK, h.Do("PATCH", autoRules(f.Project, "/"+first+"/toggle"), nil, f.Owner.Access).Status)
	autoRule(f.Project, t, map[string]any{"name": "Second", "triggerType": "ISSUE_CREATED"})
	require.Equal(t, []string{"First", "Second"}, fired("three"))
	require.Equal(t, 2, h.Count("SELECT count(*) FROM automation_executions WHERE rule_id = $1", first))
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", autoRules(f.Project, "/"+first), nil, f.Owner.Access).Status)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM automation_executions WHERE rule_id = $1", first), "the log goes with its rule")
	require.Equal(t, []string{"Second"}, fired("four"))
	admin := h.Register("Ada")
	h.MakeAdmin(admin)
	r := h.Do("POST", "/api/v1/admin/automation/rules", map[string]any{"name": "System", "triggerType": "ISSUE_CREATED"}, admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	require.Equal(t, []string{"Second", "System"}, fired("five"))
}
