package automation_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/store"
)

// autoFixture is a sprint fixture on a fresh database with the workers running, so the
// evaluation jobs of other tests never reach these workers, nor theirs ours.
func autoFixture(t *testing.T) *apitest.SprintProject {
	t.Helper()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewSprintProject(t, h)
	h.StartWorkers()
	return f
}

// autoDrain waits until no automation, notification or audit job is left to run; a job
// that failed an attempt fails the test at once with its error.
func autoDrain(t *testing.T, h *apitest.Harness) {
	t.Helper()
	const kinds = "kind IN ('automation.evaluate', 'notify.event', 'audit.record')"
	apitest.Eventually(t, 30*time.Second, func() bool {
		rows, err := h.DB.Pool.Query(context.Background(), "SELECT kind || ': ' || errors::text FROM river_job WHERE "+kinds+" AND errors IS NOT NULL")
		require.NoError(t, err)
		var errs []string
		for rows.Next() {
			var e string
			require.NoError(t, rows.Scan(&e))
			errs = append(errs, e)
		}
		require.NoError(t, rows.Err())
		require.Empty(t, errs, "jobs failed")
		return h.Count("SELECT count(*) FROM river_job WHERE "+kinds+" AND state <> 'completed'") == 0
	}, "automation jobs completed")
}

// executions is a rule's execution log through the API, newest first.
func autoExecutions(f *apitest.Project, t *testing.T, ruleID string) []map[string]any {
	t.Helper()
	r := f.H.Do("GET", autoRules(f, "/"+ruleID+"/executions?size=200"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	out := []map[string]any{}
	for _, e := range r.JSON(t)["content"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

// outcomes is "STATUS issueId detail" of each execution, sorted.
func autoOutcomes(execs []map[string]any) []string {
	out := make([]string, 0, len(execs))
	for _, e := range execs {
		d, _ := e["detail"].(string)
		out = append(out, e["status"].(string)+" "+e["issueId"].(string)+" "+d)
	}
	sort.Strings(out)
	return out
}

// newIssue creates an issue as u and returns its id and key.
func autoIssue(f *apitest.Project, t *testing.T, u apitest.User, body map[string]any) (string, string) {
	t.Helper()
	r := f.H.Do("POST", f.Path("/issues"), body, u.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m := r.JSON(t)
	return m["id"].(string), m["key"].(string)
}

// autoSorted is ss in autoOutcomes' order.
func autoSorted(ss ...string) []string {
	sort.Strings(ss)
	return ss
}

func autoCondition(typ, op, value string) map[string]any {
	return map[string]any{"type": typ, "operator": op, "params": map[string]any{"value": value}}
}

func autoAction(typ string, params map[string]any) map[string]any {
	return map[string]any{"type": typ, "params": params}
}

// commentBodies lists an issue's comments as "author: body", oldest first.
func autoComments(t *testing.T, h *apitest.Harness, issueID string) []string {
	t.Helper()
	rows, err := h.DB.Pool.Query(context.Background(), `SELECT coalesce(u.display_name, 'system') || ': ' || c.body
		FROM comments AS c LEFT JOIN users AS u ON u.id = c.author_id WHERE c.issue_id = $1 ORDER BY c.created_at, c.id`, issueID)
	require.NoError(t, err)
	out := []string{}
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestAutomationIssueCreated: ISSUE_CREATED with a condition. The BUG gets the rule's
// actions in position order, made as the automation user naming the rule and its
// creator (activity), the comment too; the TASK's execution is SKIPPED. The success is audited
// (AUTOMATION_FIRED) and the evaluation jobs are found in /admin/jobs by issue.
func TestAutomationIssueCreated(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	apitest.SetAuditLevel(t, h, "WRITE", true)
	rule := autoRule(f.Project, t, map[string]any{"name": "Triage bugs", "triggerType": "ISSUE_CREATED",
		"conditions": []any{autoCondition("ISSUE_TYPE", "IS", "bug")},
		"actions": []any{autoAction("SET_PRIORITY", map[string]any{"priority": "CRITICAL"}),
			autoAction("CREATE_COMMENT", map[string]any{"body": "Triage this"})}})
	ruleID := rule["id"].(string)

	bug, _ := autoIssue(f.Project, t, f.Member, map[string]any{"title": "Crash", "type": "BUG"})
	task, _ := autoIssue(f.Project, t, f.Member, map[string]any{"title": "Chore", "type": "TASK"})
	autoDrain(t, h)

	require.Equal(t, "CRITICAL", f.Get(t, bug)["priority"])
	require.Equal(t, "MEDIUM", f.Get(t, task)["priority"])
	require.Equal(t, []string{"Automation: Triage this"}, autoComments(t, h, bug), "authored by the automation user")
	require.Empty(t, autoComments(t, h, task))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM issue_activities AS a JOIN users AS u ON u.id = a.actor_id
		WHERE a.issue_id = $1 AND a.type = 'PRIORITY_CHANGED' AND a.new_value = 'CRITICAL' AND u.id = $2
		AND a.rule_id = $3 AND a.rule_creator_id = $4`, bug, store.AutomationUserID, ruleID, f.Owner.ID),
		"changed as the automation user, naming the rule and its creator")
	require.Equal(t, autoSorted(
		"SKIPPED "+task+" conditions not met",
		"SUCCESS "+bug+" ran SET_PRIORITY, CREATE_COMMENT",
	), autoOutcomes(autoExecutions(f.Project, t, ruleID)))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM audit_events WHERE action = 'AUTOMATION_FIRED' AND level = 'WRITE'
		AND resource_id = $1 AND project_id = $2 AND user_email = 'system' AND details::jsonb->>'issueId' = $3`, ruleID, f.ProjectID, bug))

	admin := h.Register("Ada")
	h.MakeAdmin(admin)
	r := h.Do("GET", "/api/v1/admin/jobs?kind=automation.evaluate&issueId="+bug, nil, admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, float64(1), r.JSON(t)["totalElements"], "%s", r.Body)
	r = h.Do("GET", "/api/v1/admin/jobs?kind=automation.evaluate&projectId="+f.ProjectID.String(), nil, admin.Access)
	require.Equal(t, float64(2), r.JSON(t)["totalElements"], "%s", r.Body)
}

// TestAutomationStatusChanged: the toStatusId filter picks the status; the rule's
// comment is written by the automation user and triggers no COMMENT_ADDED rule.
func TestAutomationStatusChanged(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	onDone := autoRule(f.Project, t, map[string]any{"name": "Thank on done", "triggerType": "STATUS_CHANGED",
		"triggerPayload": `{"toStatusId":"` + f.Done.String() + `"}`,
		"actions":        []any{autoAction("CREATE_COMMENT", map[string]any{"body": "Thanks, closing."})}})
	onComment := autoRule(f.Project, t, map[string]any{"name": "Comment bumps", "triggerType": "COMMENT_ADDED",
		"actions": []any{autoAction("SET_PRIORITY", map[string]any{"priority": "LOW"})}})

	id, key := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Ship it"})
	f.Patch(t, key, map[string]any{"statusId": f.Prog.String()})
	autoDrain(t, h)
	require.Empty(t, autoExecutions(f.Project, t, onDone["id"].(string)), "another status: the filter does not match, nothing is evaluated")
	f.Patch(t, key, map[string]any{"statusId": f.Done.String()})
	autoDrain(t, h)

	require.Equal(t, []string{"Automation: Thanks, closing."}, autoComments(t, h, id))
	require.Equal(t, []string{"SUCCESS " + id + " ran CREATE_COMMENT"}, autoOutcomes(autoExecutions(f.Project, t, onDone["id"].(string))))
	require.Empty(t, autoExecutions(f.Project, t, onComment["id"].(string)), "a rule's comment triggers no COMMENT_ADDED rule")
	require.Equal(t, "MEDIUM", f.Get(t, key)["priority"])
	// The comment is a comment like any other: activity and a notification job.
	require.Equal(t, 1, h.Count("SELECT count(*) FROM issue_activities WHERE issue_id = $1 AND type = 'COMMENT'", id))
}

// TestAutomationPriorityChanged: the priority filter; SET_ASSIGNEE assigns (and
// unassigns with no assigneeId), which is an ASSIGNEE_CHANGED of its own.
func TestAutomationPriorityChanged(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	escalate := autoRule(f.Project, t, map[string]any{"name": "Critical to Mia", "triggerType": "PRIORITY_CHANGED",
		"triggerPayload": map[string]any{"priority": "CRITICAL"},
		"actions":        []any{autoAction("SET_ASSIGNEE", map[string]any{"assigneeId": f.Member.ID.String()})}})
	relax := autoRule(f.Project, t, map[string]any{"name": "Low to nobody", "triggerType": "PRIORITY_CHANGED",
		"triggerPayload": map[string]any{"priority": "LOW"},
		"actions":        []any{autoAction("SET_ASSIGNEE", map[string]any{})}})
	assigned := autoRule(f.Project, t, map[string]any{"name": "Seen assignments", "triggerType": "ASSIGNEE_CHANGED"})

	id, key := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Outage"})
	f.Patch(t, key, map[string]any{"priority": "CRITICAL"})
	autoDrain(t, h)
	require.Equal(t, f.Member.ID.String(), f.Get(t, key)["assigneeId"])
	f.Patch(t, key, map[string]any{"priority": "LOW"})
	autoDrain(t, h)
	require.Nil(t, f.Get(t, key)["assigneeId"])

	require.Equal(t, []string{"SUCCESS " + id + " ran SET_ASSIGNEE"}, autoOutcomes(autoExecutions(f.Project, t, escalate["id"].(string))))
	require.Equal(t, []string{"SUCCESS " + id + " ran SET_ASSIGNEE"}, autoOutcomes(autoExecutions(f.Project, t, relax["id"].(string))))
	require.Equal(t, []string{"SUCCESS " + id + " no actions", "SUCCESS " + id + " no actions"},
		autoOutcomes(autoExecutions(f.Project, t, assigned["id"].(string))), "both assignee changes the rules made triggered rules")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM issue_activities WHERE issue_id = $1 AND type = 'UNASSIGNED'", id))
}

// TestAutomationAssigneeChangedNotifies: SEND_NOTIFICATION creates an AUTOMATION
// notification through the notification pipeline: to the recipient named, else the
// assignee; a recipient who switched AUTOMATION off in-app gets none.
func TestAutomationAssigneeChangedNotifies(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	autoRule(f.Project, t, map[string]any{"name": "Tell Viv", "triggerType": "ASSIGNEE_CHANGED",
		"actions": []any{autoAction("SEND_NOTIFICATION", map[string]any{"message": "Assigned: please review", "recipientId": f.Viewer.ID.String()}),
			autoAction("SEND_NOTIFICATION", map[string]any{})}})
	_, key := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Review me"})
	f.Patch(t, key, map[string]any{"assigneeId": f.Member.ID.String()})
	autoDrain(t, h)

	n := apitest.FindNotification(t, h, f.Viewer, "AUTOMATION", key)
	require.Equal(t, "Tell Viv on "+key, n["title"])
	require.Equal(t, "Assigned: please review ("+key+" “Review me”)", n["body"])
	n = apitest.FindNotification(t, h, f.Member, "AUTOMATION", key)
	require.Equal(t, "Automation rule fired ("+key+" “Review me”)", n["body"], "default message, to the assignee")

	// Switched off in-app: no notification.
	r := h.Do("PUT", "/api/v1/me/notification-preferences", map[string]any{"preferences": []any{
		map[string]any{"type": "AUTOMATION", "inApp": false, "email": false}}}, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	f.Patch(t, key, map[string]any{"assigneeId": f.Owner.ID.String()})
	autoDrain(t, h)
	require.Len(t, apitest.Notifications(t, h, f.Viewer), 1)
	require.Len(t, apitest.Notifications(t, h, f.Owner), 1, "the new assignee got the default one")
}

// TestAutomationCommentAddedCreatesSubtask: COMMENT_ADDED through the comments API;
// CREATE_SUBTASK makes a SUBTASK child with the given title and assignee, itself an
// ISSUE_CREATED event.
func TestAutomationCommentAddedCreatesSubtask(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	autoRule(f.Project, t, map[string]any{"name": "Follow up", "triggerType": "COMMENT_ADDED",
		"conditions": []any{autoCondition("ISSUE_TYPE", "IS_NOT", "SUBTASK")},
		"actions": []any{autoAction("CREATE_SUBTASK", map[string]any{"title": "Answer the comment", "assigneeId": f.Member.ID.String()}),
			autoAction("CREATE_SUBTASK", map[string]any{})}})
	created := autoRule(f.Project, t, map[string]any{"name": "Subtasks seen", "triggerType": "ISSUE_CREATED",
		"conditions": []any{autoCondition("ISSUE_TYPE", "IS", "SUBTASK")}})

	id, key := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Parent"})
	r := h.Do("POST", f.Path("/issues/"+key+"/comments"), map[string]any{"body": "What about this?"}, f.Member.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	autoDrain(t, h)

	rows, err := h.DB.Pool.Query(context.Background(), `SELECT title, type, coalesce(assignee_id::text, '') FROM issues
		WHERE parent_id = $1 ORDER BY number`, id)
	require.NoError(t, err)
	var subs []string
	for rows.Next() {
		var title, typ, assignee string
		require.NoError(t, rows.Scan(&title, &typ, &assignee))
		subs = append(subs, strings.Join([]string{title, typ, assignee}, " / "))
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"Answer the comment / SUBTASK / " + f.Member.ID.String(), "Auto-created subtask / SUBTASK / "}, subs)
	execs := autoExecutions(f.Project, t, created["id"].(string))
	require.Len(t, execs, 3, "the parent (skipped) and both subtasks")
	require.Equal(t, 2, h.Count("SELECT count(*) FROM automation_executions WHERE rule_id = $1 AND status = 'SUCCESS' AND chain_depth = 1", created["id"]))
}

// TestAutomationSprintTriggers: SPRINT_STARTED and SPRINT_COMPLETED fire once per
// issue of the sprint.
func TestAutomationSprintTriggers(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	started := autoRule(f.Project, t, map[string]any{"name": "Start work", "triggerType": "SPRINT_STARTED",
		"actions": []any{autoAction("SET_STATUS", map[string]any{"statusId": f.Prog.String()})}})
	completed := autoRule(f.Project, t, map[string]any{"name": "Lower leftovers", "triggerType": "SPRINT_COMPLETED",
		"conditions": []any{autoCondition("STATUS", "IS_NOT", f.Done.String())},
		"actions":    []any{autoAction("SET_PRIORITY", map[string]any{"priority": "LOW"})}})

	sp := f.NewSprint(t, map[string]any{"name": "Sprint 1"})["id"].(string)
	a, aKey := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "A"})
	b, bKey := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "B"})
	_, cKey := autoIssue(f.Project, t, f.Owner, map[string]any{"title": "Not in the sprint"})
	f.Put(t, sp, aKey)
	f.Put(t, sp, bKey)
	f.Start(t, sp)
	autoDrain(t, h)
	require.Equal(t, autoSorted("SUCCESS "+a+" ran SET_STATUS", "SUCCESS "+b+" ran SET_STATUS"),
		autoOutcomes(autoExecutions(f.Project, t, started["id"].(string))))
	require.Equal(t, f.Prog.String(), f.Get(t, aKey)["statusId"])
	require.Equal(t, f.Todo.String(), f.Get(t, cKey)["statusId"])

	f.Patch(t, bKey, map[string]any{"statusId": f.Done.String()})
	r := f.Call("POST", sp, "/complete", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	autoDrain(t, h)
	require.Equal(t, autoSorted("SKIPPED "+b+" conditions not met", "SUCCESS "+a+" ran SET_PRIORITY"),
		autoOutcomes(autoExecutions(f.Project, t, completed["id"].(string))))
	require.Equal(t, "LOW", f.Get(t, aKey)["priority"])
	require.Equal(t, "MEDIUM", f.Get(t, bKey)["priority"])
}
