package automation_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/pipeline"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/workers"
)

// schedWorker starts a worker client of its own on h's database, named id, scanning
// for due rules every 100 ms, and returns its metrics and its stop.
func schedWorker(t *testing.T, h *apitest.Harness, id string, tweak func(*workers.Config)) (*prometheus.Registry, func()) {
	t.Helper()
	cfg := workers.Config{Concurrency: 4, ID: id, AutomationScheduleScan: 100 * time.Millisecond, Webhook: h.Settings.Webhook}
	if tweak != nil {
		tweak(&cfg)
	}
	inserter, err := jobs.NewInserter(h.DB.SQL, nil)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	client, err := workers.NewClient(cfg, workers.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: h.DB,
		Registry: reg, Bus: pipeline.New(inserter, pipeline.Config{Webhook: cfg.Webhook}).Bus})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, client.Start(ctx))
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = client.Stop(sctx)
		cancel()
	}
	t.Cleanup(stop)
	return reg, stop
}

// schedDue makes the rule's next slot at (in the past: due now).
func schedDue(t *testing.T, h *apitest.Harness, ruleID string, at time.Time) {
	t.Helper()
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE automation_schedules SET next_run_at = $2 WHERE rule_id = $1", ruleID, at)
	require.NoError(t, err)
}

// schedRuns is the rule's runs through the API, latest slot first.
func schedRuns(t *testing.T, f *apitest.Project, ruleID string) []map[string]any {
	t.Helper()
	r := f.H.Do("GET", autoRules(f, "/"+ruleID+"/runs?size=200"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	out := []map[string]any{}
	for _, e := range r.JSON(t)["content"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

// schedWaitDone waits until the rule has n runs, none of them PENDING.
func schedWaitDone(t *testing.T, h *apitest.Harness, ruleID string, n int) {
	t.Helper()
	apitest.Eventually(t, 30*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM automation_runs WHERE rule_id = $1 AND status <> 'PENDING'", ruleID) >= n
	}, "the scheduled runs finished")
}

func schedRule(extra map[string]any) map[string]any {
	body := map[string]any{"name": "Nightly", "triggerType": "SCHEDULED", "schedule": "*/5 * * * *",
		"actions": []any{autoAction("CREATE_COMMENT", map[string]any{"body": "Still open"})}}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

// TestScheduledRuleValidation: every malformed scheduled member is a 400 naming it and
// nothing is stored: a seconds field, @every, a schedule more often than every five
// minutes, an unknown zone, a filter that is no object, an unknown or malformed list
// parameter, scheduled members on another trigger, a SYSTEM scheduled rule.
func TestScheduledRuleValidation(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	for _, c := range []struct {
		body  map[string]any
		field string
		code  string
	}{
		{schedRule(map[string]any{"schedule": "0 0 9 * * *"}), "schedule", "SCHEDULE"},
		{schedRule(map[string]any{"schedule": "@every 10m"}), "schedule", "SCHEDULE"},
		{schedRule(map[string]any{"schedule": "whenever"}), "schedule", "SCHEDULE"},
		{schedRule(map[string]any{"schedule": "*/2 * * * *"}), "schedule", "SCHEDULE_TOO_OFTEN"},
		{schedRule(map[string]any{"schedule": "0,58 8,9 * * *"}), "schedule", "SCHEDULE_TOO_OFTEN"},
		{schedRule(map[string]any{"schedule": nil}), "schedule", "REQUIRED"},
		{schedRule(map[string]any{"timezone": "Mars/Olympus"}), "timezone", "TIMEZONE"},
		{schedRule(map[string]any{"filter": "priority=HIGH"}), "filter", "FILTER"},
		{schedRule(map[string]any{"filter": map[string]any{"colour": "red"}}), "filter.colour", "UNKNOWN_KEY"},
		{schedRule(map[string]any{"filter": map[string]any{"statusId": "nope"}}), "filter.statusId", "INVALID_UUID"},
		{schedRule(map[string]any{"filter": map[string]any{"overdue": "maybe"}}), "filter.overdue", "FILTER_VALUE"},
		{schedRule(map[string]any{"filter": map[string]any{"priority": map[string]any{}}}), "filter.priority", "WRONG_TYPE"},
		{schedRule(map[string]any{"triggerPayload": map[string]any{"priority": "HIGH"}}), "triggerPayload", "SCHEDULED_FILTER"},
		{map[string]any{"name": "n", "triggerType": "ISSUE_CREATED", "schedule": "@daily"}, "schedule", "SCHEDULED_ONLY"},
		{map[string]any{"name": "n", "triggerType": "ISSUE_CREATED", "filter": map[string]any{"priority": "HIGH"}}, "filter", "SCHEDULED_ONLY"},
	} {
		ps := autoProblems(t, h.Do("POST", autoRules(f, ""), c.body, f.Owner.Access))
		require.Equal(t, c.code, ps[c.field], "%v: %v", c.body, ps)
	}
	// An unknown enum value in the filter is INVALID_ENUM, as on the list itself.
	r := h.Do("POST", autoRules(f, ""), schedRule(map[string]any{"filter": map[string]any{"priority": "URGENT"}}), f.Owner.Access)
	apitest.RequireProblem(t, r, http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_ENUM"))
	// The list says the same of the same parameter.
	r = h.Do("GET", f.Path("/issues?priority=URGENT"), nil, f.Owner.Access)
	apitest.RequireProblem(t, r, http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_ENUM"))
	// SYSTEM rules have no project to filter.
	admin := h.Register("Ada")
	h.MakeAdmin(admin)
	ps := autoProblems(t, h.Do("POST", "/api/v1/admin/automation/rules", schedRule(nil), admin.Access))
	require.Equal(t, "SCHEDULED_PROJECT", ps["triggerType"])
	require.Equal(t, 0, h.Count("SELECT count(*) FROM automation_rules WHERE project_id = $1", f.ProjectID), "nothing was stored")

	// An update is checked whole too, and changes nothing when refused.
	rule := autoRule(f, t, schedRule(nil))
	id := rule["id"].(string)
	ps = autoProblems(t, h.Do("PUT", autoRules(f, "/"+id), map[string]any{"schedule": "* * * * *"}, f.Owner.Access))
	require.Equal(t, "SCHEDULE_TOO_OFTEN", ps["schedule"])
	r = h.Do("GET", autoRules(f, "/"+id), nil, f.Viewer.Access)
	require.Equal(t, "*/5 * * * *", r.JSON(t)["schedule"])
}

// TestScheduledRuleReply: a scheduled rule reads back with its schedule, zone, filter
// and nextRunAt, the next slot in its zone; PUT replaces them and the next slot moves;
// a disabled rule has no nextRunAt; a rule of another trigger has nulls.
func TestScheduledRuleReply(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	before := time.Now()
	rule := autoRule(f, t, schedRule(map[string]any{"schedule": "0 9 * * MON-FRI", "timezone": "America/New_York",
		"filter": map[string]any{"priority": "HIGH", "statusId": f.Todo.String(), "overdue": true, "cf": []any{}}}))
	after := time.Now()
	id := rule["id"].(string)
	require.Equal(t, "0 9 * * MON-FRI", rule["schedule"])
	require.Equal(t, "America/New_York", rule["timezone"])
	require.Equal(t, map[string]any{"priority": "HIGH", "statusId": f.Todo.String(), "overdue": "true", "cf": []any{}}, rule["filter"])
	s, err := automation.ParseSchedule("0 9 * * MON-FRI", "America/New_York")
	require.NoError(t, err)
	next, err := time.Parse(time.RFC3339, rule["nextRunAt"].(string))
	require.NoError(t, err)
	require.Contains(t, []time.Time{s.Next(before), s.Next(after)}, next)
	ny, _ := time.LoadLocation("America/New_York")
	require.Equal(t, 9, next.In(ny).Hour(), "09:00 in New York, whatever the season")
	require.Contains(t, []int{13, 14}, next.UTC().Hour())

	// GET and the list show the same.
	got := h.Do("GET", autoRules(f, "/"+id), nil, f.Viewer.Access).JSON(t)
	require.Equal(t, rule["nextRunAt"], got["nextRunAt"])
	require.Equal(t, rule["filter"], got["filter"])
	list := h.Do("GET", autoRules(f, ""), nil, f.Viewer.Access).JSON(t)["content"].([]any)
	require.Equal(t, rule["nextRunAt"], list[0].(map[string]any)["nextRunAt"])

	// PUT: a new schedule and zone move the slot; the filter is kept unless sent.
	r := h.Do("PUT", autoRules(f, "/"+id), map[string]any{"schedule": "@daily", "timezone": "Asia/Tokyo"}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	upd := r.JSON(t)
	require.Equal(t, rule["filter"], upd["filter"])
	next, err = time.Parse(time.RFC3339, upd["nextRunAt"].(string))
	require.NoError(t, err)
	require.Equal(t, 15, next.UTC().Hour(), "midnight in Tokyo is 15:00Z")
	require.True(t, next.After(after) && next.Before(after.Add(25*time.Hour)))
	// null clears the filter.
	r = h.Do("PUT", autoRules(f, "/"+id), map[string]any{"filter": nil}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Nil(t, r.JSON(t)["filter"])

	// Disabled: no next run.
	r = h.Do("PATCH", autoRules(f, "/"+id+"/toggle"), nil, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Nil(t, r.JSON(t)["nextRunAt"])

	// Another trigger: every scheduled member null, and the schedule row gone.
	r = h.Do("PUT", autoRules(f, "/"+id), map[string]any{"triggerType": "ISSUE_CREATED"}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	for _, k := range []string{"schedule", "timezone", "filter", "nextRunAt"} {
		require.Nil(t, m[k], k)
	}
	require.Equal(t, 0, h.Count("SELECT count(*) FROM automation_schedules WHERE rule_id = $1", id))
}

// TestScheduledRunAppliesFilterConditionsAndBudget: a run evaluates the issues the
// filter matches and no other, each with its own execution (runId set): those meeting
// the conditions get the actions, the others are SKIPPED; a rule whose actions pass
// the action budget is SKIPPED on each issue with the budget's reason; a disabled rule
// does not run (its slot passes). The run is listed with its counts and its executions
// are found by runId; the runs are counted in the metric.
func TestScheduledRunAppliesFilterConditionsAndBudget(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	highTask, _ := autoIssue(f, t, f.Owner, map[string]any{"title": "A", "type": "TASK", "priority": "HIGH"})
	highTask2, _ := autoIssue(f, t, f.Owner, map[string]any{"title": "B", "type": "TASK", "priority": "HIGH"})
	highBug, _ := autoIssue(f, t, f.Owner, map[string]any{"title": "C", "type": "BUG", "priority": "HIGH"})
	lowTask, _ := autoIssue(f, t, f.Owner, map[string]any{"title": "D", "type": "TASK", "priority": "LOW"})

	rule := autoRule(f, t, schedRule(map[string]any{"filter": map[string]any{"priority": "HIGH"},
		"conditions": []any{autoCondition("ISSUE_TYPE", "IS", "TASK")}}))
	id := rule["id"].(string)
	greedy := autoRule(f, t, schedRule(map[string]any{"name": "Greedy", "filter": map[string]any{"priority": "LOW"},
		"actions": []any{autoAction("CREATE_COMMENT", map[string]any{"body": "1"}), autoAction("CREATE_COMMENT", map[string]any{"body": "2"}),
			autoAction("CREATE_COMMENT", map[string]any{"body": "3"})}}))
	greedyID := greedy["id"].(string)
	off := autoRule(f, t, schedRule(map[string]any{"name": "Off", "enabled": false}))
	offID := off["id"].(string)

	slot := time.Now().Add(-time.Minute).Truncate(time.Second)
	for _, r := range []string{id, greedyID, offID} {
		schedDue(t, h, r, slot)
	}
	reg, _ := schedWorker(t, h, "solo", func(c *workers.Config) { c.AutomationChainBudget = 2 })
	schedWaitDone(t, h, id, 1)
	schedWaitDone(t, h, greedyID, 1)
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM automation_schedules WHERE rule_id = $1 AND next_run_at > now()", offID) == 1
	}, "the disabled rule's slot passed")

	runs := schedRuns(t, f, id)
	require.Len(t, runs, 1)
	run := runs[0]
	require.Equal(t, "DONE", run["status"])
	require.Equal(t, slot.UTC().Format(time.RFC3339), run["slot"])
	require.Equal(t, 3.0, run["matched"])
	require.Equal(t, 2.0, run["succeeded"])
	require.Equal(t, 1.0, run["skipped"])
	require.Equal(t, false, run["truncated"])

	r := h.Do("GET", autoRules(f, "/"+id+"/executions?runId="+run["id"].(string)), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var execs []map[string]any
	for _, e := range r.JSON(t)["content"].([]any) {
		m := e.(map[string]any)
		require.Equal(t, run["id"], m["runId"])
		require.Equal(t, "SCHEDULED", m["eventType"])
		execs = append(execs, m)
	}
	require.Equal(t, autoSorted("SUCCESS "+highTask+" ran CREATE_COMMENT", "SUCCESS "+highTask2+" ran CREATE_COMMENT",
		"SKIPPED "+highBug+" conditions not met"), autoOutcomes(execs))
	for issue, n := range map[string]int{highTask: 1, highTask2: 1, highBug: 0, lowTask: 0} {
		require.Equal(t, n, h.Count("SELECT count(*) FROM comments WHERE issue_id = $1 AND rule_id = $2", issue, id), issue)
	}

	// The greedy rule's three actions pass the budget of 2 on its one issue.
	gexecs := autoExecutions(f, t, greedyID)
	require.Len(t, gexecs, 1)
	require.Equal(t, "SKIPPED", gexecs[0]["status"])
	require.Contains(t, gexecs[0]["detail"], "action budget spent")
	require.Equal(t, 0, h.Count("SELECT count(*) FROM comments WHERE rule_id = $1", greedyID))

	require.Empty(t, schedRuns(t, f, offID), "a disabled rule does not run")
	require.Equal(t, 2.0, autoMetric(t, reg, "taskweave_automation_scheduled_runs_total", map[string]string{"outcome": "done"}))
	require.Equal(t, 1.0, autoMetric(t, reg, "taskweave_automation_limited_total", map[string]string{"limit": "budget"}))
	require.Equal(t, 2.0, autoMetric(t, reg, "taskweave_automation_evaluations_total", map[string]string{"trigger": "SCHEDULED", "outcome": "success"}))
}

// TestScheduledRuleMissedSlotsRunOnce: a daily rule due three hours ago (missed while no
// worker ran) runs once, for the slot it was due at, and its next slot is the first one
// after now. A daily slot keeps the real clock from bringing another slot due while the
// test runs (an every-five-minutes schedule did, near a five-minute boundary).
func TestScheduledRuleMissedSlotsRunOnce(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	issueID, _ := autoIssue(f, t, f.Owner, map[string]any{"title": "A"})
	missed := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Minute)
	daily := fmt.Sprintf("%d %d * * *", missed.Minute(), missed.Hour())
	id := autoRule(f, t, schedRule(map[string]any{"schedule": daily}))["id"].(string)
	schedDue(t, h, id, missed)

	schedWorker(t, h, "late", nil)
	schedWaitDone(t, h, id, 1)
	time.Sleep(time.Second) // ten more scans
	runs := schedRuns(t, f, id)
	require.Len(t, runs, 1, "one run, not one per missed slot")
	require.Equal(t, missed.Format(time.RFC3339), runs[0]["slot"])
	require.Equal(t, 1, h.Count("SELECT count(*) FROM comments WHERE issue_id = $1 AND rule_id = $2", issueID, id))
	var next time.Time
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT next_run_at FROM automation_schedules WHERE rule_id = $1", id).Scan(&next))
	require.True(t, next.Equal(missed.Add(24*time.Hour)), "the next slot is the first one after now: %s", next)
}

// TestScheduledRuleOncePerSlotAcrossWorkers: three worker clients scan for due rules
// (each every 100 ms, plus a burst of scan jobs at once); each slot runs exactly once,
// and so does each issue's action. The leader (which enqueues the periodic scan) is
// stopped between two slots; another client takes over and the second slot runs once
// too.
func TestScheduledRuleOncePerSlotAcrossWorkers(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	var issues []string
	for _, title := range []string{"A", "B", "C", "D", "E"} {
		id, _ := autoIssue(f, t, f.Owner, map[string]any{"title": title})
		issues = append(issues, id)
	}
	id := autoRule(f, t, schedRule(nil))["id"].(string)

	stops := map[string]func(){}
	for _, name := range []string{"w1", "w2", "w3"} {
		_, stop := schedWorker(t, h, name, nil)
		stops[name] = stop
	}
	inserter, err := jobs.NewInserter(h.DB.SQL, nil)
	require.NoError(t, err)
	burst := func() {
		params := make([]river.InsertManyParams, 12)
		for i := range params {
			params[i] = river.InsertManyParams{Args: jobs.AutomationScheduleScan{}}
		}
		_, err := inserter.InsertMany(context.Background(), params)
		require.NoError(t, err)
	}
	leader := func() string {
		var l string
		apitest.Eventually(t, 30*time.Second, func() bool {
			err := h.DB.Pool.QueryRow(context.Background(), "SELECT leader_id FROM river_leader").Scan(&l)
			_, known := stops[l]
			return err == nil && known
		}, "a leader was elected")
		return l
	}

	first := leader()
	slot1 := time.Now().Add(-2 * time.Minute).Truncate(time.Second)
	schedDue(t, h, id, slot1)
	burst()
	schedWaitDone(t, h, id, 1)

	stops[first]()
	delete(stops, first)
	apitest.Eventually(t, 30*time.Second, func() bool {
		var l string
		err := h.DB.Pool.QueryRow(context.Background(), "SELECT leader_id FROM river_leader").Scan(&l)
		_, alive := stops[l]
		return err == nil && alive
	}, "another client took the lead")
	slot2 := time.Now().Add(-time.Minute).Truncate(time.Second)
	schedDue(t, h, id, slot2)
	burst()
	schedWaitDone(t, h, id, 2)
	time.Sleep(time.Second) // more scans, on both clients left

	runs := schedRuns(t, f, id)
	require.Len(t, runs, 2)
	require.Equal(t, slot2.UTC().Format(time.RFC3339), runs[0]["slot"])
	require.Equal(t, slot1.UTC().Format(time.RFC3339), runs[1]["slot"])
	for _, run := range runs {
		require.Equal(t, "DONE", run["status"])
		require.Equal(t, 5.0, run["succeeded"])
	}
	for _, issue := range issues {
		require.Equal(t, 2, h.Count("SELECT count(*) FROM comments WHERE issue_id = $1 AND rule_id = $2", issue, id),
			"one comment per slot on %s", issue)
	}
	require.Equal(t, 10, h.Count("SELECT count(*) FROM automation_executions WHERE rule_id = $1", id))
	require.Equal(t, 2, h.Count("SELECT count(*) FROM river_job WHERE kind = 'automation.run'"), "one run job per slot")
	require.GreaterOrEqual(t, h.Count(`SELECT count(DISTINCT w) FROM river_job, unnest(attempted_by) AS w
		WHERE kind = 'automation.schedule_scan'`), 2, "the scans ran on several clients")
}

// TestScheduledRunNeedsItsCreator: a scheduled rule whose creator is no longer a member
// of the project when its slot comes does not act: the run is SKIPPED with the reason, the rule is
// disabled (with the reason) and no issue is touched.
func TestScheduledRunNeedsItsCreator(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	ari := h.Register("Ari")
	f.AddMember(t, ari, "ADMIN")
	issueID, _ := autoIssue(f, t, f.Owner, map[string]any{"title": "A"})
	r := h.Do("POST", autoRules(f, ""), schedRule(nil), ari.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	id := r.JSON(t)["id"].(string)
	// Behind the API's back, so the run meets it (the API's removal disables the rule at once).
	_, err := h.DB.Pool.Exec(context.Background(), "DELETE FROM project_members WHERE user_id = $1 AND project_id = $2", ari.ID, f.ProjectID)
	require.NoError(t, err)
	schedDue(t, h, id, time.Now().Add(-time.Minute).Truncate(time.Second))

	reg, _ := schedWorker(t, h, "solo", nil)
	schedWaitDone(t, h, id, 1)
	runs := schedRuns(t, f, id)
	require.Len(t, runs, 1)
	require.Equal(t, "SKIPPED", runs[0]["status"])
	require.Contains(t, runs[0]["detail"], "the rule's creator is no longer a member of the project")
	require.Equal(t, 0.0, runs[0]["matched"])
	require.Equal(t, 0, h.Count("SELECT count(*) FROM comments WHERE issue_id = $1", issueID))
	rule := h.Do("GET", autoRules(f, "/"+id), nil, f.Viewer.Access).JSON(t)
	require.Equal(t, false, rule["enabled"])
	require.Contains(t, rule["disabledReason"], "no longer a member")
	require.Nil(t, rule["nextRunAt"])
	require.Equal(t, 1.0, autoMetric(t, reg, "taskweave_automation_scheduled_runs_total", map[string]string{"outcome": "skipped"}))
	require.Equal(t, 1.0, autoMetric(t, reg, "taskweave_automation_limited_total", map[string]string{"limit": "creator"}))
}
