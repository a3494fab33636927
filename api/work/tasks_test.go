package work_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/pipeline"
	"github.com/taskweave/taskweave/domain/task"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/workers"
)

// taskWait polls GET /tasks/{id} as u until the task has finished, and returns it.
func taskWait(t *testing.T, h *apitest.Harness, u apitest.User, id string) map[string]any {
	t.Helper()
	var m map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r := h.Do("GET", "/api/v1/tasks/"+id, nil, u.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		m = r.JSON(t)
		if s := m["state"].(string); s == "SUCCEEDED" || s == "FAILED" || s == "CANCELLED" {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
	var errs string
	_ = h.DB.Pool.QueryRow(context.Background(), "SELECT coalesce(string_agg(errors::text, ' | '), '') FROM river_job WHERE args->>'taskId' = $1", id).Scan(&errs)
	t.Fatalf("task %s did not finish within 30 s: %v; job errors: %s", id, m, errs)
	return nil
}

// taskCursorPast waits until task id has committed at least n items.
func taskCursorPast(t *testing.T, h *apitest.Harness, id string, n int) {
	t.Helper()
	apitest.Eventually(t, 20*time.Second, func() bool {
		return h.Count("SELECT cursor FROM tasks WHERE id = $1", id) >= n
	}, "the task's first batches committed")
}

// taskBulk posts a bulk change as u and returns the task id (202 expected).
func taskBulk(t *testing.T, f *apitest.Project, u apitest.User, body map[string]any) string {
	t.Helper()
	r := f.H.Do("POST", f.Path("/issues/bulk"), body, u.Access)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	id := r.JSON(t)["taskId"].(string)
	require.Equal(t, "/api/v1/tasks/"+id, r.Header.Get("Location"))
	return id
}

// taskIssues creates n issues as the owner; assigned ones go to the member.
func taskIssues(t *testing.T, f *apitest.Project, n int, body func(i int) map[string]any) []string {
	t.Helper()
	keys := make([]string, n)
	for i := range keys {
		b := map[string]any{"title": fmt.Sprintf("Issue %d", i), "type": "TASK", "priority": "MEDIUM"}
		if body != nil {
			for k, v := range body(i) {
				b[k] = v
			}
		}
		keys[i] = f.Create(t, b)["key"].(string)
	}
	return keys
}

// TestBulkChangeTransitionsThroughTheWorkflow: a bulk transition moves the issues the
// workflow lets through and records a per-issue error for each refused one, while the
// task SUCCEEDS; a refused issue keeps every other change of the bulk too.
func TestBulkChangeTransitionsThroughTheWorkflow(t *testing.T) {
	t.Parallel()
	f := apitest.NotifyProject(t, nil)
	ctx := context.Background()
	_, err := f.H.DB.Pool.Exec(ctx, `INSERT INTO workflow_transitions (workflow_id, from_status_id, to_status_id, guards)
		SELECT workflow_id, $2, $3, '[{"type":"REQUIRED_FIELD","field":"assigneeId"}]' FROM projects WHERE id = $1`,
		f.ProjectID, f.Todo, f.Prog)
	require.NoError(t, err)
	keys := taskIssues(t, f, 6, func(i int) map[string]any {
		if i%2 == 0 {
			return map[string]any{"assigneeId": f.Member.ID}
		}
		return nil
	})
	label := f.Label(t, "moved")
	apitest.SetAuditLevel(t, f.H, "WRITE", true)

	id := taskBulk(t, f, f.Member, map[string]any{"issueKeys": keys,
		"changes": map[string]any{"statusId": f.Prog, "addLabelIds": []string{label}, "priority": "HIGH"}})
	m := taskWait(t, f.H, f.Member, id)
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	require.Equal(t, "BULK_CHANGE", m["kind"])
	require.Equal(t, f.Key, m["projectKey"])
	require.Equal(t, f.Member.ID.String(), m["createdBy"])
	require.Equal(t, map[string]any{"done": 6.0, "total": 6.0, "failed": 3.0}, m["progress"])
	require.NotNil(t, m["startedAt"])
	require.NotNil(t, m["finishedAt"])
	require.Nil(t, m["resultUrl"])
	var failedKeys []string
	for _, e := range m["errors"].([]any) {
		e := e.(map[string]any)
		require.Equal(t, "GUARD_FAILED", e["code"])
		require.Contains(t, e["message"], "assigneeId")
		failedKeys = append(failedKeys, e["item"].(string))
	}
	require.Equal(t, []string{keys[1], keys[3], keys[5]}, failedKeys)

	for i, k := range keys {
		got := f.Get(t, k)
		if i%2 == 0 {
			require.Equal(t, "In Progress", got["statusName"], k)
			require.Equal(t, "HIGH", got["priority"], k)
			require.Len(t, got["labels"], 1, k)
			require.Contains(t, f.Activity(t, got["id"].(string)), "STATUS_CHANGED:To Do→In Progress")
		} else {
			require.Equal(t, "To Do", got["statusName"], k)
			require.Equal(t, "MEDIUM", got["priority"], k)
			require.Empty(t, got["labels"], k)
		}
	}
	// Each applied change went through the issue rules: one audited status change per
	// moved issue, from the task's creator.
	apitest.Eventually(t, 10*time.Second, func() bool {
		return f.H.Count(`SELECT count(*) FROM audit_events WHERE action = 'ISSUE_TRANSITIONED' AND user_email = $1`,
			f.Member.Email) == 3
	}, "three audited transitions")
}

// TestBulkChangeByFilterAndDelete: a filter picks the issues the list would list; a
// delete (project ADMIN) removes exactly them.
func TestBulkChangeByFilterAndDelete(t *testing.T) {
	t.Parallel()
	f := apitest.NotifyProject(t, nil)
	keys := taskIssues(t, f, 5, func(i int) map[string]any {
		if i < 2 {
			return map[string]any{"priority": "LOW"}
		}
		return nil
	})
	sprint := f.Sprint(t, "S1", "PLANNED")
	id := taskBulk(t, f, f.Member, map[string]any{"filter": map[string]string{"priority": "LOW"},
		"changes": map[string]any{"sprintId": sprint, "assigneeId": f.Member.ID}})
	m := taskWait(t, f.H, f.Member, id)
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	require.Equal(t, map[string]any{"done": 2.0, "total": 2.0, "failed": 0.0}, m["progress"])
	require.Equal(t, sprint, f.Get(t, keys[0])["sprintId"])
	require.Nil(t, f.Get(t, keys[2])["sprintId"])

	// null unassigns and sends to the backlog.
	id = taskBulk(t, f, f.Member, map[string]any{"issueKeys": keys[:1], "changes": map[string]any{"sprintId": nil, "assigneeId": nil}})
	require.Equal(t, "SUCCEEDED", taskWait(t, f.H, f.Member, id)["state"])
	got := f.Get(t, keys[0])
	require.Nil(t, got["sprintId"])
	require.Nil(t, got["assigneeId"])

	r := f.H.Do("POST", f.Path("/issues/bulk"), map[string]any{"issueKeys": keys[3:], "changes": map[string]any{"delete": true}}, f.Member.Access)
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	id = taskBulk(t, f, f.Owner, map[string]any{"issueKeys": keys[3:], "changes": map[string]any{"delete": true}})
	require.Equal(t, "SUCCEEDED", taskWait(t, f.H, f.Owner, id)["state"])
	require.Equal(t, 3, f.H.Count("SELECT count(*) FROM issues WHERE project_id = $1", f.ProjectID))
	require.Equal(t, http.StatusNotFound, f.H.Do("GET", f.Path("/issues/"+keys[4]), nil, f.Owner.Access).Status)
}

// TestBulkChangeBadRequests: every malformed request is a 400 naming its reason, and
// queues nothing.
func TestBulkChangeBadRequests(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	keys := taskIssues(t, f, 1, nil)
	many := make([]string, 10_001)
	for i := range many {
		many[i] = fmt.Sprintf("%s-%d", f.Key, i+1)
	}
	for _, c := range []struct {
		body   any
		reason string
	}{
		{map[string]any{"issueKeys": keys}, "MISSING_FIELD"},
		{map[string]any{"issueKeys": keys, "changes": map[string]any{}}, "NO_CHANGES"},
		{map[string]any{"changes": map[string]any{"priority": "LOW"}}, "BULK_TARGET"},
		{map[string]any{"issueKeys": keys, "filter": map[string]string{}, "changes": map[string]any{"priority": "LOW"}}, "BULK_TARGET"},
		{map[string]any{"issueKeys": []string{keys[0], f.Key + "-999"}, "changes": map[string]any{"priority": "LOW"}}, "UNKNOWN_ISSUE_KEY"},
		{map[string]any{"issueKeys": many, "changes": map[string]any{"priority": "LOW"}}, "TOO_MANY_ISSUES"},
		{map[string]any{"issueKeys": keys, "changes": map[string]any{"priority": "SOON"}}, "INVALID_ENUM"},
		{map[string]any{"issueKeys": keys, "changes": map[string]any{"statusId": "nope"}}, "INVALID_UUID"},
		{map[string]any{"filter": map[string]string{"sort": "sideways"}, "changes": map[string]any{"priority": "LOW"}}, "INVALID_QUERY"},
		{"[1]", "MALFORMED_JSON"},
	} {
		r := f.H.Do("POST", f.Path("/issues/bulk"), c.body, f.Member.Access)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", c.reason, r.Body)
		require.Equal(t, c.reason, r.JSON(t)["reason"], "%s", r.Body)
	}
	require.Zero(t, f.H.Count("SELECT count(*) FROM tasks WHERE project_id = $1", f.ProjectID))
}

// TestTaskPermissionMatrix: who may start a bulk change, and who may see and cancel the
// task: its creator, the project's ADMINs and system ADMINs; anyone else gets 404.
func TestTaskPermissionMatrix(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	keys := taskIssues(t, f, 2, nil)
	other := f.H.Register("Other")
	f.AddMember(t, other, "MEMBER")
	sysAdmin := f.H.Register("Sys")
	f.H.MakeAdmin(sysAdmin)
	body := map[string]any{"issueKeys": keys, "changes": map[string]any{"priority": "LOW"}}

	for _, c := range []struct {
		who    apitest.User
		status int
	}{{f.Viewer, 403}, {f.Outsider, 403}, {f.Member, 202}, {f.Owner, 202}} {
		r := f.H.Do("POST", f.Path("/issues/bulk"), body, c.who.Access)
		require.Equal(t, c.status, r.Status, "%s: %s", c.who.Email, r.Body)
	}
	r := f.H.Do("POST", "/api/v1/projects/NOPE1/issues/bulk", body, f.Member.Access)
	require.Equal(t, http.StatusNotFound, r.Status)

	// No workers run on the shared database: the task stays QUEUED.
	id := taskBulk(t, f, f.Member, body)
	for _, c := range []struct {
		who    apitest.User
		status int
	}{{f.Member, 200}, {f.Owner, 200}, {sysAdmin, 200}, {other, 404}, {f.Viewer, 404}, {f.Outsider, 404}} {
		r := f.H.Do("GET", "/api/v1/tasks/"+id, nil, c.who.Access)
		require.Equal(t, c.status, r.Status, "%s: %s", c.who.Email, r.Body)
		r = f.H.Do("POST", "/api/v1/tasks/"+id+"/cancel", nil, c.who.Access)
		if c.status == 404 {
			require.Equal(t, 404, r.Status, "%s: %s", c.who.Email, r.Body)
			require.Equal(t, "TASK_NOT_FOUND", r.JSON(t)["reason"])
		}
	}
	require.Equal(t, 404, f.H.Do("GET", "/api/v1/tasks/"+uuid.NewString(), nil, f.Member.Access).Status)
	require.Equal(t, 400, f.H.Do("GET", "/api/v1/tasks/nope", nil, f.Member.Access).Status)

	// The member's list holds the member's own tasks only, newest first.
	r = f.H.Do("GET", "/api/v1/tasks?mine=true", nil, f.Member.Access)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	page := r.JSON(t)
	require.Equal(t, 2.0, page["totalElements"])
	require.Equal(t, id, page["content"].([]any)[0].(map[string]any)["id"])
	r = f.H.Do("GET", "/api/v1/tasks", nil, f.Viewer.Access)
	require.Equal(t, 0.0, r.JSON(t)["totalElements"])
	require.Equal(t, 400, f.H.Do("GET", "/api/v1/tasks?mine=false", nil, f.Member.Access).Status)
}

// TestTaskCancel: a queued task is CANCELLED at once and never runs; cancelling a
// finished task is 409.
func TestTaskCancel(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.New(t, apitest.Options{}))
	keys := taskIssues(t, f, 2, nil)
	id := taskBulk(t, f, f.Member, map[string]any{"issueKeys": keys, "changes": map[string]any{"priority": "LOW"}})
	r := f.H.Do("POST", "/api/v1/tasks/"+id+"/cancel", nil, f.Member.Access)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	require.Equal(t, "CANCELLED", r.JSON(t)["state"])
	r = f.H.Do("POST", "/api/v1/tasks/"+id+"/cancel", nil, f.Member.Access)
	require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
	require.Equal(t, "TASK_FINISHED", r.JSON(t)["reason"])

	f.H.StartWorkers()
	apitest.Eventually(t, 10*time.Second, func() bool {
		return f.H.Count("SELECT count(*) FROM river_job WHERE kind = 'task.bulk_change' AND state = 'completed'") == 1
	}, "the cancelled task's job completed")
	require.Equal(t, "MEDIUM", f.Get(t, keys[0])["priority"], "a cancelled task changes nothing")
	m := taskWait(t, f.H, f.Member, id)
	require.Equal(t, map[string]any{"done": 0.0, "total": 2.0, "failed": 0.0}, m["progress"])
}

// taskWorkerClient starts a worker client of its own on h's database (as a worker
// process would) and returns it with its stop.
func taskWorkerClient(t *testing.T, h *apitest.Harness) (stop func(cancel bool)) {
	t.Helper()
	inserter, err := jobs.NewInserter(h.DB.SQL, nil)
	require.NoError(t, err)
	bus := pipeline.New(inserter, pipeline.Config{}).Bus
	files, err := attachment.NewLocal(h.Settings.AttachmentsDir)
	require.NoError(t, err)
	client, err := workers.NewClient(workers.Config{Concurrency: 2}, workers.Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: h.DB, Registry: prometheus.NewRegistry(), Bus: bus,
		Attachments: attachment.NewStores(files)})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, client.Start(ctx))
	stopped := false
	stop = func(hard bool) {
		if stopped {
			return
		}
		stopped = true
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		if hard {
			_ = client.StopAndCancel(sctx)
		} else {
			_ = client.Stop(sctx)
		}
		cancel()
	}
	t.Cleanup(func() { stop(false) })
	return stop
}

// TestTaskResumesAfterWorkerStopsWithoutDuplicates: a worker stopped mid-task (its
// running batch cancelled) leaves the committed batches; another worker resumes from
// the cursor, and every issue is changed exactly once.
func TestTaskResumesAfterWorkerStopsWithoutDuplicates(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	const n = 300
	keys := taskIssues(t, f, n, nil)
	id := taskBulk(t, f, f.Member, map[string]any{"issueKeys": keys, "changes": map[string]any{"priority": "LOW"}})

	stop := taskWorkerClient(t, h)
	taskCursorPast(t, h, id, 50)
	stop(true)
	cursor := h.Count("SELECT cursor FROM tasks WHERE id = $1", id)
	require.Less(t, cursor, n, "the worker was stopped mid-task")
	require.Equal(t, cursor, h.Count(`SELECT count(*) FROM issue_activities a JOIN issues i ON i.id = a.issue_id
		WHERE i.project_id = $1 AND a.type = 'PRIORITY_CHANGED'`, f.ProjectID), "what the cursor says is what was applied")
	var state string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT state FROM tasks WHERE id = $1", id).Scan(&state))
	require.Equal(t, "RUNNING", state)

	taskWorkerClient(t, h)
	m := taskWait(t, h, f.Member, id)
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	require.Equal(t, map[string]any{"done": float64(n), "total": float64(n), "failed": 0.0}, m["progress"])
	require.Equal(t, n, h.Count(`SELECT count(*) FROM issue_activities a JOIN issues i ON i.id = a.issue_id
		WHERE i.project_id = $1 AND a.type = 'PRIORITY_CHANGED'`, f.ProjectID), "every issue changed exactly once")
	require.Equal(t, n, h.Count("SELECT count(*) FROM issues WHERE project_id = $1 AND priority = 'LOW'", f.ProjectID))
	require.Equal(t, 0, strings.Count(string(m["state"].(string)), "x"))
}

// TestBulkChangeFoldsNotifications: a bulk transition of issues assigned to one person
// sends that person one notification, not one per issue.
func TestBulkChangeFoldsNotifications(t *testing.T) {
	t.Parallel()
	f := apitest.NotifyProject(t, nil)
	keys := taskIssues(t, f, 4, func(int) map[string]any { return map[string]any{"assigneeId": f.Member.ID} })
	apitest.DrainJobs(t, f.H)
	before := len(apitest.Notifications(t, f.H, f.Member))
	require.Equal(t, 4, before, "one assignment notification per issue created")

	id := taskBulk(t, f, f.Owner, map[string]any{"issueKeys": keys, "changes": map[string]any{"statusId": f.Prog}})
	require.Equal(t, "SUCCEEDED", taskWait(t, f.H, f.Owner, id)["state"])
	apitest.DrainJobs(t, f.H)
	require.Equal(t, 4, f.H.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND args->>'taskId' = $1", id),
		"every change still has its notification job")
	list := apitest.Notifications(t, f.H, f.Member)
	require.Len(t, list, before+1, "the four status changes fold into one notification")
	require.Equal(t, "STATUS_CHANGED", list[0]["type"])
}

// TestTaskRetention: tasks finished more than 14 days ago go with their files; younger
// ones and unfinished ones stay.
func TestTaskRetention(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	keys := taskIssues(t, f, 1, nil)
	ids := make([]string, 3)
	for i := range ids {
		ids[i] = taskBulk(t, f, f.Owner, map[string]any{"issueKeys": keys, "changes": map[string]any{"priority": "LOW"}})
	}
	ctx := context.Background()
	_, err := h.DB.Pool.Exec(ctx, `UPDATE tasks SET state = 'SUCCEEDED', finished_at = now() - interval '15 days' WHERE id = $1`, ids[0])
	require.NoError(t, err)
	_, err = h.DB.Pool.Exec(ctx, `INSERT INTO task_files (task_id, slot, seq, data) VALUES ($1, 'result', 0, 'x')`, ids[0])
	require.NoError(t, err)
	_, err = h.DB.Pool.Exec(ctx, `UPDATE tasks SET state = 'SUCCEEDED', finished_at = now() - interval '13 days' WHERE id = $1`, ids[1])
	require.NoError(t, err)
	n, err := task.Expire(ctx, h.DB.Bun, 0)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Zero(t, h.Count("SELECT count(*) FROM tasks WHERE id = $1", ids[0]))
	require.Zero(t, h.Count("SELECT count(*) FROM task_files WHERE task_id = $1", ids[0]))
	require.Equal(t, 2, h.Count("SELECT count(*) FROM tasks WHERE id = ANY($1::uuid[])", ids[1:]))
}

// TestTaskCancelWhileRunning: a running task stops before its next batch: CANCELLED,
// with the batches it committed applied and no more.
func TestTaskCancelWhileRunning(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	const n = 800
	keys := taskIssues(t, f, n, nil)
	id := taskBulk(t, f, f.Member, map[string]any{"issueKeys": keys, "changes": map[string]any{"priority": "LOW"}})
	taskWorkerClient(t, h)
	taskCursorPast(t, h, id, 50)
	r := h.Do("POST", "/api/v1/tasks/"+id+"/cancel", nil, f.Owner.Access)
	require.Equal(t, http.StatusAccepted, r.Status, "a project ADMIN may cancel: %s", r.Body)
	m := taskWait(t, h, f.Member, id)
	require.Equal(t, "CANCELLED", m["state"])
	done := int(m["progress"].(map[string]any)["done"].(float64))
	require.Less(t, done, n)
	require.Equal(t, done, h.Count("SELECT count(*) FROM issues WHERE project_id = $1 AND priority = 'LOW'", f.ProjectID),
		"exactly the committed batches were applied")
}
