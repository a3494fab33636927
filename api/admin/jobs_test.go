package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/jobs"
)

// jobSpec is a river_job row written straight into the table, so a test controls every
// state, error and timestamp River would otherwise set over time.
type jobSpec struct {
	kind, queue, state string
	args               map[string]any
	attempt, max       int
	errors             []map[string]any
	// scheduledAgo and finalizedAgo are offsets into the past (negative: the future).
	scheduledAgo, finalizedAgo time.Duration
	attemptedBy                []string
}

// jobInsert writes one job and returns its id. Finalized states get a finalized_at
// (River's check constraint wants one exactly then).
func jobInsert(t *testing.T, h *apitest.Harness, j jobSpec) int64 {
	t.Helper()
	if j.queue == "" {
		j.queue = "default"
	}
	if j.max == 0 {
		j.max = 25
	}
	if j.args == nil {
		j.args = map[string]any{}
	}
	if j.errors == nil {
		j.errors = []map[string]any{}
	}
	if j.attemptedBy == nil {
		j.attemptedBy = []string{}
	}
	args, err := json.Marshal(j.args)
	require.NoError(t, err)
	errs, err := json.Marshal(j.errors)
	require.NoError(t, err)
	var finalized *time.Time
	switch j.state {
	case "completed", "cancelled", "discarded":
		at := time.Now().Add(-j.finalizedAgo)
		finalized = &at
	}
	var attempted *time.Time
	if j.attempt > 0 {
		at := time.Now().Add(-j.scheduledAgo)
		attempted = &at
	}
	var id int64
	err = h.DB.Pool.QueryRow(context.Background(), `
		INSERT INTO river_job (args, kind, queue, state, attempt, max_attempts, priority, errors, scheduled_at,
			finalized_at, attempted_at, attempted_by, tags, metadata)
		VALUES ($1::jsonb, $2, $3, $4::river_job_state, $5, $6, 1, ARRAY(SELECT jsonb_array_elements($7::jsonb)),
			now() - make_interval(secs => $8), $9, $10, $11, '{}', '{}')
		RETURNING id`,
		string(args), j.kind, j.queue, j.state, j.attempt, j.max, string(errs), j.scheduledAgo.Seconds(),
		finalized, attempted, j.attemptedBy).Scan(&id)
	require.NoError(t, err)
	return id
}

// jobAttemptError is one entry of river_job.errors.
func jobAttemptError(attempt int, msg string) map[string]any {
	return map[string]any{"at": time.Now().UTC().Add(-time.Minute).Format(time.RFC3339Nano), "attempt": attempt,
		"error": msg, "trace": "goroutine 1 [running]:\nmain.work()\n\t/app/work.go:" + fmt.Sprint(attempt)}
}

// jobEnv is a fresh database with an admin, a non-admin, two projects and an issue, and
// no jobs: everything the setup enqueued (audit rows) is deleted so counts are exact.
type jobEnv struct {
	h                    *apitest.Harness
	admin, member        apitest.User
	key1, key2, issueKey string
	p1, p2, issue        uuid.UUID
}

func jobSetup(t *testing.T) *jobEnv {
	t.Helper()
	h := apitest.New(t, apitest.Options{})
	e := &jobEnv{h: h, admin: h.Register("Ada"), member: h.Register("Max")}
	h.MakeAdmin(e.admin)
	h.SetSystemRole(e.member, "MEMBER")
	e.key1, e.key2 = apitest.PostProject(t, h, e.admin.Access), apitest.PostProject(t, h, e.admin.Access)
	ctx := context.Background()
	require.NoError(t, h.DB.Pool.QueryRow(ctx, "SELECT id FROM projects WHERE key = $1", e.key1).Scan(&e.p1))
	require.NoError(t, h.DB.Pool.QueryRow(ctx, "SELECT id FROM projects WHERE key = $1", e.key2).Scan(&e.p2))
	r := h.Do("POST", "/api/v1/projects/"+e.key1+"/issues", map[string]any{"title": "Broken webhook"}, e.admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m := r.JSON(t)
	e.issue, e.issueKey = uuid.MustParse(m["id"].(string)), m["key"].(string)
	_, err := h.DB.Pool.Exec(ctx, "DELETE FROM river_job")
	require.NoError(t, err)
	// WRITE entries are off by default (audit_config); the job operations' entries are WRITE.
	jobAuditWrite(t, h, true)
	return e
}

func jobAuditWrite(t *testing.T, h *apitest.Harness, on bool) {
	t.Helper()
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE audit_config SET enabled = $1 WHERE level = 'WRITE'", on)
	require.NoError(t, err)
}

// jobIDs lists the ids of a page's content, in order.
func jobIDs(t *testing.T, page map[string]any) []int64 {
	t.Helper()
	var out []int64
	for _, c := range page["content"].([]any) {
		out = append(out, int64(c.(map[string]any)["id"].(float64)))
	}
	return out
}

func TestJobsEndpointsNeedSystemAdmin(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	member := h.Register("Mel")
	h.SetSystemRole(member, "MEMBER")
	calls := []struct{ method, path string }{
		{"GET", "/api/v1/admin/jobs"},
		{"GET", "/api/v1/admin/jobs/1"},
		{"POST", "/api/v1/admin/jobs/1/retry"},
		{"POST", "/api/v1/admin/jobs/1/cancel"},
		{"GET", "/api/v1/admin/queues"},
	}
	for _, c := range calls {
		r := h.Do(c.method, c.path, nil, "")
		apitest.RequireProblem(t, r, http.StatusUnauthorized, "UNAUTHORIZED", apitest.NoReason)
		require.Equal(t, "Bearer", r.Header.Get("WWW-Authenticate"), c.path)
		apitest.RequireProblem(t, h.Do(c.method, c.path, nil, member.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("ADMIN_ONLY"))
	}
}

func TestJobsListFiltersAndPaging(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h, tok := e.h, e.admin.Access
	j1 := jobInsert(t, h, jobSpec{kind: "test.alpha", state: "available",
		args: map[string]any{"projectId": e.p1.String(), "issueId": e.issue.String()}})
	j2 := jobInsert(t, h, jobSpec{kind: "test.alpha", queue: "webhooks", state: "discarded", attempt: 2, max: 2,
		args:   map[string]any{"projectId": e.p1.String(), "deliveryId": uuid.NewString()},
		errors: []map[string]any{jobAttemptError(1, "first failure"), jobAttemptError(2, "connection refused")}})
	// A webhook job names its issues in an array; the issue filters find it there too.
	j3 := jobInsert(t, h, jobSpec{kind: "test.beta", queue: "webhooks", state: "completed", attempt: 1,
		args: map[string]any{"projectId": e.p2.String(), "issueIds": []string{uuid.NewString(), e.issue.String()}}})
	j4 := jobInsert(t, h, jobSpec{kind: "test.beta", queue: "audit", state: "retryable", attempt: 1,
		errors: []map[string]any{jobAttemptError(1, "timeout")}})
	j5 := jobInsert(t, h, jobSpec{kind: "test.gamma", queue: "custom", state: "scheduled", scheduledAgo: -time.Hour})

	all := h.Do("GET", "/api/v1/admin/jobs", nil, tok)
	require.Equal(t, http.StatusOK, all.Status, "%s", all.Body)
	page := all.JSON(t)
	require.Equal(t, []int64{j5, j4, j3, j2, j1}, jobIDs(t, page))
	require.EqualValues(t, 5, page["totalElements"])
	require.EqualValues(t, 20, page["size"])
	require.EqualValues(t, 0, page["number"])
	require.EqualValues(t, 1, page["totalPages"])
	require.Equal(t, true, page["first"])
	require.Equal(t, true, page["last"])

	// The discarded job as a list item: the last error, no error history.
	item := page["content"].([]any)[3].(map[string]any)
	require.EqualValues(t, j2, item["id"])
	require.Equal(t, "test.alpha", item["kind"])
	require.Equal(t, "webhooks", item["queue"])
	require.Equal(t, "discarded", item["state"])
	require.EqualValues(t, 2, item["attempt"])
	require.EqualValues(t, 2, item["maxAttempts"])
	require.EqualValues(t, 1, item["priority"])
	require.EqualValues(t, 2, item["errorCount"])
	require.Equal(t, e.p1.String(), item["args"].(map[string]any)["projectId"])
	last := item["lastError"].(map[string]any)
	require.Equal(t, "connection refused", last["error"])
	require.EqualValues(t, 2, last["attempt"])
	require.Contains(t, last["trace"], "work.go:2")
	require.NotContains(t, item, "errors")
	require.NotNil(t, item["finalizedAt"])
	require.NotNil(t, item["attemptedAt"])
	require.Equal(t, []any{}, item["tags"])
	require.Equal(t, []any{}, item["attemptedBy"])
	for _, k := range []string{"createdAt", "scheduledAt"} {
		_, err := time.Parse(time.RFC3339Nano, item[k].(string))
		require.NoError(t, err, k)
		require.True(t, strings.HasSuffix(item[k].(string), "Z"), k)
	}
	// A job that never failed says so with null.
	first := page["content"].([]any)[4].(map[string]any)
	require.Nil(t, first["lastError"])
	require.Nil(t, first["finalizedAt"])
	require.EqualValues(t, 0, first["errorCount"])

	cases := []struct {
		query string
		want  []int64
	}{
		{"state=discarded", []int64{j2}},
		{"state=DISCARDED", []int64{j2}},
		{"state=scheduled", []int64{j5}},
		{"kind=test.beta", []int64{j4, j3}},
		{"queue=webhooks", []int64{j3, j2}},
		{"kind=test.alpha&queue=webhooks", []int64{j2}},
		{"projectId=" + e.p1.String(), []int64{j2, j1}},
		{"projectId=" + e.p2.String(), []int64{j3}},
		{"issueId=" + e.issue.String(), []int64{j3, j1}},
		{"issueId=" + e.issue.String() + "&projectId=" + e.p2.String(), []int64{j3}},
		{"projectKey=" + strings.ToLower(e.key1), []int64{j2, j1}},
		{"issueKey=" + e.issueKey, []int64{j3, j1}},
		{"projectKey=" + e.key1 + "&issueKey=" + e.issueKey, []int64{j1}},
		{"projectKey=" + e.key1 + "&state=available", []int64{j1}},
		// Unknown keys, or a key and an id that disagree, match nothing: an empty page.
		{"projectKey=NOSUCH", nil},
		{"issueKey=NOSUCH-1", nil},
		{"projectKey=" + e.key1 + "&projectId=" + e.p2.String(), nil},
		{"projectId=" + uuid.NewString(), nil},
		{"kind=nothing.like.this", nil},
	}
	for _, c := range cases {
		r := h.Do("GET", "/api/v1/admin/jobs?"+c.query, nil, tok)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", c.query, r.Body)
		p := r.JSON(t)
		require.Equal(t, c.want, jobIDs(t, p), c.query)
		require.EqualValues(t, len(c.want), p["totalElements"], c.query)
		require.Equal(t, len(c.want) == 0, p["empty"], c.query)
	}

	// Paging: size 2 over five jobs.
	p := h.Do("GET", "/api/v1/admin/jobs?size=2", nil, tok).JSON(t)
	require.Equal(t, []int64{j5, j4}, jobIDs(t, p))
	require.EqualValues(t, 3, p["totalPages"])
	require.EqualValues(t, 5, p["totalElements"])
	require.Equal(t, false, p["last"])
	p = h.Do("GET", "/api/v1/admin/jobs?size=2&page=2", nil, tok).JSON(t)
	require.Equal(t, []int64{j1}, jobIDs(t, p))
	require.Equal(t, true, p["last"])
	require.EqualValues(t, 1, p["numberOfElements"])
	p = h.Do("GET", "/api/v1/admin/jobs?size=2&page=9", nil, tok).JSON(t)
	require.Empty(t, jobIDs(t, p))
	require.EqualValues(t, 5, p["totalElements"])
	p = h.Do("GET", "/api/v1/admin/jobs?size=500", nil, tok).JSON(t)
	require.EqualValues(t, 200, p["size"])

	bad := []struct{ query, reason string }{
		{"state=bogus", "INVALID_ENUM"},
		{"projectId=xyz", "INVALID_UUID"},
		{"issueId=123", "INVALID_UUID"},
		{"issueId=" + strings.ReplaceAll(uuid.NewString(), "-", ""), "INVALID_UUID"},
		{"kind=a%00b", "INVALID_QUERY"},
		{"queue=%ff", "INVALID_QUERY"},
		{"page=-1", "INVALID_PAGE"},
		{"size=0", "INVALID_PAGE"},
		{"page=x", "INVALID_PAGE"},
		{"page=99999999999", "INVALID_PAGE"},
	}
	for _, b := range bad {
		apitest.RequireProblem(t, h.Do("GET", "/api/v1/admin/jobs?"+b.query, nil, tok), http.StatusBadRequest, "BAD_REQUEST", apitest.ReasonOrNone(b.reason))
	}
}

func TestJobDetail(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h, tok := e.h, e.admin.Access
	failed := jobInsert(t, h, jobSpec{kind: "webhook.deliver", queue: "webhooks", state: "discarded", attempt: 3, max: 3,
		args:        map[string]any{"projectId": e.p1.String(), "webhookId": uuid.NewString()},
		attemptedBy: []string{"worker-1", "worker-2"},
		errors: []map[string]any{jobAttemptError(1, "dial tcp: refused"), jobAttemptError(2, "HTTP 500"),
			jobAttemptError(3, "HTTP 502")}})
	fresh := jobInsert(t, h, jobSpec{kind: "audit.record", queue: "audit", state: "available"})

	r := h.Do("GET", fmt.Sprintf("/api/v1/admin/jobs/%d", failed), nil, tok)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.EqualValues(t, failed, m["id"])
	require.Equal(t, "discarded", m["state"])
	require.EqualValues(t, 3, m["attempt"])
	require.EqualValues(t, 3, m["errorCount"])
	require.Equal(t, []any{"worker-1", "worker-2"}, m["attemptedBy"])
	errs := m["errors"].([]any)
	require.Len(t, errs, 3)
	for i, want := range []string{"dial tcp: refused", "HTTP 500", "HTTP 502"} {
		e := errs[i].(map[string]any)
		require.Equal(t, want, e["error"])
		require.EqualValues(t, i+1, e["attempt"])
		require.Contains(t, e["trace"], fmt.Sprintf("work.go:%d", i+1))
		_, err := time.Parse(time.RFC3339Nano, e["at"].(string))
		require.NoError(t, err)
	}
	require.Equal(t, "HTTP 502", m["lastError"].(map[string]any)["error"])
	require.Equal(t, e.p1.String(), m["args"].(map[string]any)["projectId"])

	m = h.Do("GET", fmt.Sprintf("/api/v1/admin/jobs/%d", fresh), nil, tok).JSON(t)
	require.Equal(t, []any{}, m["errors"])
	require.Nil(t, m["lastError"])
	require.Equal(t, map[string]any{}, m["args"])

	for _, id := range []string{"abc", "0", "-4", "1.5", "99999999999999999999"} {
		apitest.RequireProblem(t, h.Do("GET", "/api/v1/admin/jobs/"+id, nil, tok), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_JOB_ID"))
	}
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/admin/jobs/987654321", nil, tok), http.StatusNotFound, "NOT_FOUND", apitest.Reason("JOB_NOT_FOUND"))
}

// jobAuditJobs counts the audit jobs a job operation enqueued for job id.
func jobAuditJobs(t *testing.T, h *apitest.Harness, action string, id int64) int {
	t.Helper()
	want, err := json.Marshal(map[string]any{"action": action, "resourceType": "JOB", "resourceId": fmt.Sprint(id), "level": "WRITE"})
	require.NoError(t, err)
	return h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args @> $1::jsonb`, string(want))
}

func TestJobRetryAndCancel(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h, tok := e.h, e.admin.Access
	state := func(id int64) string {
		var s string
		require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT state::text FROM river_job WHERE id = $1", id).Scan(&s))
		return s
	}

	// Retry: a discarded job whose attempts ran out becomes available with one more.
	discarded := jobInsert(t, h, jobSpec{kind: "test.retry", state: "discarded", attempt: 3, max: 3, finalizedAgo: time.Minute,
		errors: []map[string]any{jobAttemptError(3, "gave up")}})
	r := h.Do("POST", fmt.Sprintf("/api/v1/admin/jobs/%d/retry", discarded), nil, tok)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.Equal(t, "available", m["state"])
	require.EqualValues(t, 4, m["maxAttempts"])
	require.Nil(t, m["finalizedAt"])
	require.Len(t, m["errors"], 1, "the history stays")
	require.Equal(t, "available", state(discarded))
	require.Equal(t, 1, jobAuditJobs(t, h, "JOB_RETRIED", discarded))
	var details string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		`SELECT args->>'details' FROM river_job WHERE kind = 'audit.record' AND args->>'resourceId' = $1`, fmt.Sprint(discarded)).Scan(&details))
	require.JSONEq(t, `{"kind":"test.retry","queue":"default","stateBefore":"discarded","stateAfter":"available"}`, details)
	var auditUser string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		`SELECT args->>'userId' FROM river_job WHERE kind = 'audit.record' AND args->>'resourceId' = $1`, fmt.Sprint(discarded)).Scan(&auditUser))
	require.Equal(t, e.admin.ID.String(), auditUser)

	// River leaves a running job alone on retry; the request is still audited.
	running := jobInsert(t, h, jobSpec{kind: "test.retry", state: "running", attempt: 1})
	m = h.Do("POST", fmt.Sprintf("/api/v1/admin/jobs/%d/retry", running), nil, tok).JSON(t)
	require.Equal(t, "running", m["state"])
	require.Equal(t, "running", state(running))
	require.Equal(t, 1, jobAuditJobs(t, h, "JOB_RETRIED", running))

	// Cancel: an available job is cancelled at once.
	available := jobInsert(t, h, jobSpec{kind: "test.cancel", state: "available"})
	r = h.Do("POST", fmt.Sprintf("/api/v1/admin/jobs/%d/cancel", available), nil, tok)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m = r.JSON(t)
	require.Equal(t, "cancelled", m["state"])
	require.NotNil(t, m["finalizedAt"])
	require.Equal(t, "cancelled", state(available))
	require.Equal(t, 1, jobAuditJobs(t, h, "JOB_CANCELLED", available))

	// A finalized job stays as it is.
	completed := jobInsert(t, h, jobSpec{kind: "test.cancel", state: "completed", attempt: 1})
	m = h.Do("POST", fmt.Sprintf("/api/v1/admin/jobs/%d/cancel", completed), nil, tok).JSON(t)
	require.Equal(t, "completed", m["state"])
	require.Equal(t, "completed", state(completed))
	require.Equal(t, 1, jobAuditJobs(t, h, "JOB_CANCELLED", completed))

	// Unknown and malformed ids change nothing and enqueue nothing.
	before := h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record'")
	for _, op := range []string{"retry", "cancel"} {
		apitest.RequireProblem(t, h.Do("POST", "/api/v1/admin/jobs/987654321/"+op, nil, tok), http.StatusNotFound, "NOT_FOUND", apitest.Reason("JOB_NOT_FOUND"))
		apitest.RequireProblem(t, h.Do("POST", "/api/v1/admin/jobs/x/"+op, nil, tok), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_JOB_ID"))
		apitest.RequireProblem(t, h.Do("POST", fmt.Sprintf("/api/v1/admin/jobs/%d/%s", available, op), nil, e.member.Access),
			http.StatusForbidden, "FORBIDDEN", apitest.Reason("ADMIN_ONLY"))
	}
	require.Equal(t, before, h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record'"))
	require.Equal(t, "cancelled", state(available))

	// With WRITE switched off the operation still works and records nothing.
	jobAuditWrite(t, h, false)
	quiet := jobInsert(t, h, jobSpec{kind: "test.cancel", state: "available"})
	m = h.Do("POST", fmt.Sprintf("/api/v1/admin/jobs/%d/cancel", quiet), nil, tok).JSON(t)
	require.Equal(t, "cancelled", m["state"])
	require.Equal(t, 0, jobAuditJobs(t, h, "JOB_CANCELLED", quiet))
}

// TestJobCancelAuditRowIsWritten runs the workers so the audit job of a cancel becomes a
// row in audit_events, like any other WRITE entry.
func TestJobCancelAuditRowIsWritten(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h := e.h
	// Cancelled, the job is final: the workers only run the audit job.
	id := jobInsert(t, h, jobSpec{kind: "test.later", state: "scheduled", scheduledAgo: -24 * time.Hour})
	r := h.Do("POST", fmt.Sprintf("/api/v1/admin/jobs/%d/cancel", id), nil, e.admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	h.StartWorkers()
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count(`SELECT count(*) FROM audit_events WHERE action = 'JOB_CANCELLED' AND level = 'WRITE'
			AND resource_type = 'JOB' AND resource_id = $1 AND user_id = $2`, fmt.Sprint(id), e.admin.ID) == 1
	}, "JOB_CANCELLED audit row")
}

func TestQueuesSummary(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h, tok := e.h, e.admin.Access
	jobInsert(t, h, jobSpec{kind: "a", state: "available", scheduledAgo: 90 * time.Second})
	jobInsert(t, h, jobSpec{kind: "a", state: "available", scheduledAgo: 5 * time.Second})
	jobInsert(t, h, jobSpec{kind: "a", state: "running", attempt: 1})
	jobInsert(t, h, jobSpec{kind: "b", queue: "webhooks", state: "retryable", attempt: 1, scheduledAgo: -time.Minute})
	jobInsert(t, h, jobSpec{kind: "b", queue: "webhooks", state: "completed", attempt: 1, finalizedAgo: 10 * time.Minute})
	jobInsert(t, h, jobSpec{kind: "b", queue: "webhooks", state: "completed", attempt: 1, finalizedAgo: 2 * time.Hour})
	jobInsert(t, h, jobSpec{kind: "b", queue: "webhooks", state: "discarded", attempt: 1, finalizedAgo: 48 * time.Hour})
	jobInsert(t, h, jobSpec{kind: "c", queue: "audit", state: "cancelled", finalizedAgo: time.Hour})
	jobInsert(t, h, jobSpec{kind: "d", queue: "zeta", state: "scheduled", scheduledAgo: -time.Hour})
	jobInsert(t, h, jobSpec{kind: "d", queue: "zeta", state: "pending"})
	_, err := h.DB.Pool.Exec(context.Background(),
		`INSERT INTO river_queue (name, created_at, metadata, paused_at, updated_at) VALUES ('alpha', now(), '{}', now(), now())`)
	require.NoError(t, err)

	r := h.Do("GET", "/api/v1/admin/queues", nil, tok)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	got := map[string]map[string]any{}
	var names []string
	for _, q := range r.Array(t) {
		m := q.(map[string]any)
		names = append(names, m["name"].(string))
		got[m["name"].(string)] = m
	}
	// The served queues first, in their order, then the others by name.
	require.Equal(t, append(append([]string{}, jobs.Queues...), "alpha", "zeta"), names)
	require.Equal(t, []string{"default", "audit", "webhooks", "integrations"}, jobs.Queues[:4])
	counts := func(name string) map[string]float64 {
		out := map[string]float64{}
		for _, k := range []string{"available", "scheduled", "running", "retryable", "pending", "completed", "discarded", "cancelled"} {
			out[k] = got[name][k].(float64)
		}
		return out
	}
	zero := map[string]float64{"available": 0, "scheduled": 0, "running": 0, "retryable": 0, "pending": 0, "completed": 0, "discarded": 0, "cancelled": 0}
	with := func(k map[string]float64) map[string]float64 {
		out := map[string]float64{}
		for n, v := range zero {
			out[n] = v
		}
		for n, v := range k {
			out[n] = v
		}
		return out
	}
	require.Equal(t, with(map[string]float64{"available": 2, "running": 1}), counts("default"))
	// Completed counts the last hour only; discarded every one River keeps.
	require.Equal(t, with(map[string]float64{"retryable": 1, "completed": 1, "discarded": 1}), counts("webhooks"))
	require.Equal(t, with(map[string]float64{"cancelled": 1}), counts("audit"))
	require.Equal(t, with(map[string]float64{"scheduled": 1, "pending": 1}), counts("zeta"))
	require.Equal(t, zero, counts("integrations"))
	require.Equal(t, zero, counts("alpha"))

	age := got["default"]["oldestAvailableAgeSeconds"].(float64)
	require.GreaterOrEqual(t, age, 90.0)
	require.Less(t, age, 150.0)
	require.EqualValues(t, 0, got["webhooks"]["oldestAvailableAgeSeconds"])
	require.Equal(t, true, got["alpha"]["paused"])
	require.Equal(t, false, got["default"]["paused"])
}
