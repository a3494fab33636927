package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/jobs"
)

// riverUISecret is in the args of the job River UI tests insert: no refused reply may
// carry it.
const riverUISecret = "s3cret-args-only-admins-see"

// riverUITestArgs is a job kind of the tests' own, inserted through River's client as
// the API inserts every job.
type riverUITestArgs struct {
	Note string `json:"note"`
}

func (riverUITestArgs) Kind() string { return "test.river_ui" }

// riverUIInsert inserts one available job with River's insert-only client.
func riverUIInsert(t *testing.T, h *apitest.Harness) int64 {
	t.Helper()
	client, err := jobs.NewInserter(h.DB.SQL, nil)
	require.NoError(t, err)
	res, err := client.Insert(context.Background(), riverUITestArgs{Note: riverUISecret}, &river.InsertOpts{Queue: "default"})
	require.NoError(t, err)
	return res.Job.ID
}

// riverUISameOrigin are the headers a browser sends with River UI's own fetch calls.
var riverUISameOrigin = []string{"Sec-Fetch-Site", "same-origin", "Origin", "http://localhost:8080"}

// riverUICookie logs the user in through the ops form and returns its session cookie
// with the same-origin headers, ready for apitest's Do.
func riverUICookie(t *testing.T, h *apitest.Harness, email string) []string {
	t.Helper()
	return append([]string{"Cookie", opsSessionCookie(t, h, email)}, riverUISameOrigin...)
}

func riverUIState(t *testing.T, h *apitest.Harness, id int64) string {
	t.Helper()
	var s string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT coalesce((SELECT state::text FROM river_job WHERE id = $1), 'gone')", id).Scan(&s))
	return s
}

// riverUIAudit counts the audit jobs of action on a resource.
func riverUIAudit(t *testing.T, h *apitest.Harness, action, resourceType, resourceID string) int {
	t.Helper()
	want, err := json.Marshal(map[string]any{"action": action, "resourceType": resourceType, "resourceId": resourceID, "level": "WRITE"})
	require.NoError(t, err)
	return h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args @> $1::jsonb`, string(want))
}

// riverUIAuditAll counts the audit jobs of job and queue operations (logins and token
// creation enqueue audit jobs of their own).
func riverUIAuditAll(t *testing.T, h *apitest.Harness) int {
	t.Helper()
	return h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'resourceType' IN ('JOB', 'QUEUE')`)
}

// riverUIAuditDetails returns the details and user of the one audit job of action on a
// resource.
func riverUIAuditDetails(t *testing.T, h *apitest.Harness, action, resourceID string) (details map[string]any, userID string) {
	t.Helper()
	var raw string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `SELECT args->>'details', args->>'userId' FROM river_job
		WHERE kind = 'audit.record' AND args->>'action' = $1 AND args->>'resourceId' = $2`, action, resourceID).Scan(&raw, &userID))
	require.NoError(t, json.Unmarshal([]byte(raw), &details))
	return details, userID
}

func TestRiverUIRefusesAllButSystemAdmins(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h := e.h
	id := riverUIInsert(t, h)
	noSecret := func(r *apitest.Response) {
		t.Helper()
		require.NotContains(t, string(r.Body), riverUISecret)
		require.NotContains(t, string(r.Body), "test.river_ui")
	}
	apiPaths := []string{"/admin/river/api/jobs?state=available", fmt.Sprintf("/admin/river/api/jobs/%d", id),
		"/admin/river/api/queues", "/admin/river/api/states"}
	pagePaths := []string{"/admin/river/", "/admin/river", "/admin/river/jobs?state=available",
		fmt.Sprintf("/admin/river/jobs/%d", id), "/admin/river/favicon.ico"}

	// Anonymous: River UI's API is 401 with the bearer challenge, its pages send the
	// browser to the ops login form; a bad bearer is 401 everywhere, a bad cookie is none.
	for _, p := range apiPaths {
		r := h.Do("GET", p, nil, "")
		apitest.RequireProblem(t, r, http.StatusUnauthorized, "UNAUTHORIZED", apitest.NoReason)
		require.Equal(t, "Bearer", r.Header.Get("WWW-Authenticate"), p)
		noSecret(r)
		r = h.Do("GET", p, nil, "not-a-token")
		apitest.RequireProblem(t, r, http.StatusUnauthorized, "UNAUTHORIZED", apitest.NoReason)
		noSecret(r)
		r = h.Do("GET", p, nil, "", "Cookie", "tw_ops=not-a-jwt")
		apitest.RequireProblem(t, r, http.StatusUnauthorized, "UNAUTHORIZED", apitest.NoReason)
	}
	for _, p := range pagePaths {
		for _, hdr := range [][]string{nil, {"Cookie", "tw_ops=not-a-jwt"}} {
			r := h.Do("GET", p, nil, "", hdr...)
			require.Equal(t, http.StatusSeeOther, r.Status, "%s: %s", p, r.Body)
			require.Equal(t, "/admin/ops/", r.Header.Get("Location"), p)
			noSecret(r)
		}
		apitest.RequireProblem(t, h.Do("GET", p, nil, "not-a-token"), http.StatusUnauthorized, "UNAUTHORIZED", apitest.NoReason)
	}
	apitest.RequireProblem(t, h.Do("POST", "/admin/river/api/jobs/cancel", map[string]any{"ids": []string{fmt.Sprint(id)}}, ""),
		http.StatusUnauthorized, "UNAUTHORIZED", apitest.NoReason)

	// A member, by bearer token or by a session cookie of its own token: 403, on pages
	// too (the ops error page), and nothing changes.
	memberCookie := "tw_ops=" + e.member.Access
	for _, p := range apiPaths {
		r := h.Do("GET", p, nil, e.member.Access)
		apitest.RequireProblem(t, r, http.StatusForbidden, "FORBIDDEN", apitest.Reason("ADMIN_ONLY"))
		noSecret(r)
		r = h.Do("GET", p, nil, "", "Cookie", memberCookie)
		apitest.RequireProblem(t, r, http.StatusForbidden, "FORBIDDEN", apitest.Reason("ADMIN_ONLY"))
		noSecret(r)
	}
	for _, p := range pagePaths[:4] {
		body := opsRequireHTML(t, h.Do("GET", p, nil, "", "Cookie", memberCookie), http.StatusForbidden)
		require.Contains(t, body, "Only system administrators")
		require.NotContains(t, body, riverUISecret)
	}
	for _, op := range []string{"cancel", "retry", "delete"} {
		r := h.Do("POST", "/admin/river/api/jobs/"+op, map[string]any{"ids": []string{fmt.Sprint(id)}}, e.member.Access)
		apitest.RequireProblem(t, r, http.StatusForbidden, "FORBIDDEN", apitest.Reason("ADMIN_ONLY"))
		r = h.Do("POST", "/admin/river/api/jobs/"+op, map[string]any{"ids": []string{fmt.Sprint(id)}}, "",
			append([]string{"Cookie", memberCookie}, riverUISameOrigin...)...)
		apitest.RequireProblem(t, r, http.StatusForbidden, "FORBIDDEN", apitest.Reason("ADMIN_ONLY"))
	}
	require.Equal(t, "available", riverUIState(t, h, id))

	// A project API key carries its creator's role, but never leaves its project: even
	// an admin's is refused.
	key := e.key1
	r := h.Do("POST", "/api/v1/projects/"+key+"/api-keys", map[string]any{"name": "ci"}, e.admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	apiKey := r.JSON(t)["plaintext"].(string)
	r = h.Do("GET", apiPaths[0], nil, apiKey)
	apitest.RequireProblem(t, r, http.StatusForbidden, "FORBIDDEN", apitest.Reason("API_KEY_SCOPE"))
	noSecret(r)

	// An admin's read-only personal token reads, but changes nothing.
	r = h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "ro", "scope": "READ_ONLY"}, e.admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	readOnly := r.JSON(t)["plaintext"].(string)
	r = h.Do("GET", apiPaths[1], nil, readOnly)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	apitest.RequireProblem(t, h.Do("POST", "/admin/river/api/jobs/cancel", map[string]any{"ids": []string{fmt.Sprint(id)}}, readOnly),
		http.StatusForbidden, "FORBIDDEN", apitest.Reason("READ_ONLY_TOKEN"))
	require.Equal(t, "available", riverUIState(t, h, id))
	require.Zero(t, riverUIAuditAll(t, h))
}

func TestRiverUIListsJobsForAdmins(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h := e.h
	id := riverUIInsert(t, h)

	listed := func(r *apitest.Response) map[string]any {
		t.Helper()
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		data := r.JSON(t)["data"].([]any)
		for _, d := range data {
			if j := d.(map[string]any); j["id"] == float64(id) {
				return j
			}
		}
		t.Fatalf("job %d not listed: %s", id, r.Body)
		return nil
	}
	// River UI's own JSON API, by bearer token and by the ops session cookie.
	for _, auth := range []struct {
		token   string
		headers []string
	}{{e.admin.Access, nil}, {"", riverUICookie(t, h, e.admin.Email)}} {
		j := listed(h.Do("GET", "/admin/river/api/jobs?state=available", nil, auth.token, auth.headers...))
		require.Equal(t, "test.river_ui", j["kind"])
		require.Equal(t, "default", j["queue"])
		require.JSONEq(t, `{"note":"`+riverUISecret+`"}`, j["args"].(string))

		r := h.Do("GET", fmt.Sprintf("/admin/river/api/jobs/%d", id), nil, auth.token, auth.headers...)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Contains(t, string(r.Body), riverUISecret)
		r = h.Do("GET", "/admin/river/api/states", nil, auth.token, auth.headers...)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.EqualValues(t, h.Count("SELECT count(*) FROM river_job WHERE state = 'available'"),
			r.JSON(t)["available"].(map[string]any)["count"])
	}

	// The page: River UI's index, told where its API is, with a CSP that allows its own
	// assets and nothing else.
	cookie := riverUICookie(t, h, e.admin.Email)
	r := h.Do("GET", "/admin/river/", nil, "", append(cookie, "Accept", "text/html")...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "text/html; charset=utf-8", r.Header.Get("Content-Type"))
	body := string(r.Body)
	require.Contains(t, body, `"apiUrl":"/admin/river/api"`)
	require.Contains(t, body, `src="/admin/river/assets/`)
	csp := r.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "default-src 'self'")
	require.Contains(t, csp, "script-src 'self';")
	require.Contains(t, csp, "connect-src 'self'")
	require.Contains(t, csp, "frame-ancestors 'none'")
	require.NotContains(t, csp, "unsafe-eval")
	require.Equal(t, 1, strings.Count(csp, "unsafe-inline"), "inline styles only, never inline script")
	require.Contains(t, csp, "style-src 'self' 'unsafe-inline';")
	require.NotContains(t, csp, "http")
	require.NotContains(t, csp, "*")
	require.Equal(t, "DENY", r.Header.Get("X-Frame-Options"))
	require.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"))
	require.Equal(t, "no-store", r.Header.Get("Cache-Control"))
	// An SPA route is the same page; the script it loads is served.
	r = h.Do("GET", fmt.Sprintf("/admin/river/jobs/%d", id), nil, "", append(cookie, "Accept", "text/html")...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Contains(t, string(r.Body), "config__json")
	script := body[strings.Index(body, `src="/admin/river/assets/`)+len(`src="`):]
	script = script[:strings.IndexByte(script, '"')]
	r = h.Do("GET", script, nil, "", cookie...)
	require.Equal(t, http.StatusOK, r.Status)
	require.Contains(t, r.Header.Get("Content-Type"), "javascript")
	require.Contains(t, r.Header.Get("Cache-Control"), "immutable")

	// The ops page links to it.
	opsBody := opsRequireHTML(t, h.Do("GET", "/admin/ops/", nil, "", cookie[:2]...), http.StatusOK)
	require.Contains(t, opsBody, `<a id="river-ui" href="/admin/river/">`)
}

func TestRiverUIRefusesCrossSiteChanges(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h := e.h
	id := riverUIInsert(t, h)
	_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO river_queue (name, created_at, metadata, updated_at)
		VALUES ('default', now(), '{}', now()) ON CONFLICT (name) DO NOTHING`)
	require.NoError(t, err)
	cookie := opsSessionCookie(t, h, e.admin.Email)
	body := map[string]any{"ids": []string{fmt.Sprint(id)}}

	// A cookie-carrying request from another site, however it says so; and the admin's
	// bearer token does not make a cross-site request acceptable either.
	for _, hdr := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Sec-Fetch-Site", "same-site"},
		{"Origin", "https://evil.example"}, {"Origin", "null"},
		{"Sec-Fetch-Site", "cross-site", "Origin", "http://localhost:8080"}} {
		for _, call := range []struct{ method, path string }{
			{"POST", "/admin/river/api/jobs/cancel"}, {"POST", "/admin/river/api/jobs/retry"},
			{"POST", "/admin/river/api/jobs/delete"}, {"PUT", "/admin/river/api/queues/default/pause"},
			{"PUT", "/admin/river/api/queues/default/resume"}, {"PATCH", "/admin/river/api/queues/default"},
		} {
			r := h.Do(call.method, call.path, body, "", append([]string{"Cookie", cookie}, hdr...)...)
			apitest.RequireProblem(t, r, http.StatusForbidden, "FORBIDDEN", apitest.Reason("CROSS_SITE_REQUEST"))
			r = h.Do(call.method, call.path, body, e.admin.Access, hdr...)
			apitest.RequireProblem(t, r, http.StatusForbidden, "FORBIDDEN", apitest.Reason("CROSS_SITE_REQUEST"))
		}
	}
	require.Equal(t, "available", riverUIState(t, h, id))
	require.Zero(t, h.Count("SELECT count(*) FROM river_queue WHERE paused_at IS NOT NULL"))
	require.Zero(t, riverUIAuditAll(t, h))

	// River UI's queue settings call (concurrency limits, River Pro's) is not served,
	// same-site or not.
	r := h.Do("PATCH", "/admin/river/api/queues/default", map[string]any{"concurrency": map[string]any{"global_limit": 1}},
		"", append([]string{"Cookie", cookie}, riverUISameOrigin...)...)
	apitest.RequireProblem(t, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", apitest.NoReason)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_queue WHERE name = 'default' AND metadata = '{}'::jsonb"))
}

func TestRiverUIJobActionsAreAudited(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h := e.h
	cookie := riverUICookie(t, h, e.admin.Email)
	post := func(op string, body any, headers ...string) *apitest.Response {
		t.Helper()
		return h.Do("POST", "/admin/river/api/jobs/"+op, body, "", append(append([]string{}, cookie...), headers...)...)
	}
	ok := func(r *apitest.Response) {
		t.Helper()
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.JSONEq(t, `{"status":"ok"}`, string(r.Body))
	}

	// Cancel, as River UI's front end sends it (ids as strings, a text/plain body).
	available := riverUIInsert(t, h)
	ok(post("cancel", fmt.Sprintf(`{"ids":["%d"]}`, available), "Content-Type", "text/plain;charset=UTF-8"))
	require.Equal(t, "cancelled", riverUIState(t, h, available))
	require.Equal(t, 1, riverUIAudit(t, h, "JOB_CANCELLED", "JOB", fmt.Sprint(available)))
	details, user := riverUIAuditDetails(t, h, "JOB_CANCELLED", fmt.Sprint(available))
	require.Equal(t, map[string]any{"kind": "test.river_ui", "queue": "default", "stateBefore": "available",
		"stateAfter": "cancelled", "via": "river-ui"}, details)
	require.Equal(t, e.admin.ID.String(), user)

	// Retry, two jobs at once, ids as numbers too; each audited.
	d1 := jobInsert(t, h, jobSpec{kind: "test.retry", state: "discarded", attempt: 3, max: 3, finalizedAgo: time.Minute})
	d2 := jobInsert(t, h, jobSpec{kind: "test.retry", state: "discarded", attempt: 3, max: 3, finalizedAgo: time.Minute})
	ok(post("retry", map[string]any{"ids": []any{fmt.Sprint(d1), d2, fmt.Sprint(d1)}}))
	for _, id := range []int64{d1, d2} {
		require.Equal(t, "available", riverUIState(t, h, id))
		require.Equal(t, 1, riverUIAudit(t, h, "JOB_RETRIED", "JOB", fmt.Sprint(id)), "a repeated id is done once")
	}

	// Delete: the row is gone and the entry tells what it was (not its args).
	done := jobInsert(t, h, jobSpec{kind: "test.delete", queue: "webhooks", state: "completed", attempt: 1,
		args: map[string]any{"secret": riverUISecret}})
	ok(post("delete", map[string]any{"ids": []string{fmt.Sprint(done)}}))
	require.Equal(t, "gone", riverUIState(t, h, done))
	details, _ = riverUIAuditDetails(t, h, "JOB_DELETED", fmt.Sprint(done))
	require.Equal(t, map[string]any{"kind": "test.delete", "queue": "webhooks", "state": "completed", "via": "river-ui"}, details)
	require.Zero(t, h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args::text LIKE '%'||$1||'%'", riverUISecret))

	// All or nothing: with one unknown id, or a running job to delete, nothing changes
	// and nothing is audited.
	before := riverUIAuditAll(t, h)
	fresh := riverUIInsert(t, h)
	running := jobInsert(t, h, jobSpec{kind: "test.delete", state: "running", attempt: 1})
	apitest.RequireProblem(t, post("cancel", map[string]any{"ids": []string{fmt.Sprint(fresh), "987654321"}}),
		http.StatusNotFound, "NOT_FOUND", apitest.Reason("JOB_NOT_FOUND"))
	apitest.RequireProblem(t, post("delete", map[string]any{"ids": []string{fmt.Sprint(fresh), fmt.Sprint(running)}}),
		http.StatusConflict, "CONFLICT", apitest.Reason("JOB_RUNNING"))
	require.Equal(t, "available", riverUIState(t, h, fresh))
	require.Equal(t, "running", riverUIState(t, h, running))

	// Bad bodies are 400, never 5xx.
	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprint(i + 1)
	}
	for _, b := range []struct {
		body   any
		reason string
	}{
		{map[string]any{"ids": []string{}}, "INVALID_JOB_IDS"},
		{map[string]any{"ids": []string{"x"}}, "INVALID_JOB_IDS"},
		{map[string]any{"ids": []any{0}}, "INVALID_JOB_IDS"},
		{map[string]any{"ids": []any{1.5}}, "INVALID_JOB_IDS"},
		{map[string]any{"ids": []any{nil}}, "INVALID_JOB_IDS"},
		{map[string]any{"ids": []string{"99999999999999999999"}}, "INVALID_JOB_IDS"},
		{map[string]any{"ids": many}, "INVALID_JOB_IDS"},
		{map[string]any{"ids": "1"}, "WRONG_TYPE"},
		{map[string]any{}, "MISSING_FIELD"},
		{"not json", "MALFORMED_JSON"},
		{"", "MALFORMED_JSON"},
	} {
		for _, op := range []string{"cancel", "retry", "delete"} {
			apitest.RequireProblem(t, post(op, b.body), http.StatusBadRequest, "BAD_REQUEST", apitest.ReasonOrNone(b.reason))
		}
	}
	require.Equal(t, "available", riverUIState(t, h, fresh))
	require.Equal(t, before, riverUIAuditAll(t, h))

	// A non-browser client with an admin token sends no Origin: accepted.
	r := h.Do("POST", "/admin/river/api/jobs/cancel", map[string]any{"ids": []string{fmt.Sprint(fresh)}}, e.admin.Access)
	ok(r)
	require.Equal(t, "cancelled", riverUIState(t, h, fresh))
	require.Equal(t, 1, riverUIAudit(t, h, "JOB_CANCELLED", "JOB", fmt.Sprint(fresh)))
}

func TestRiverUIQueuePauseAndResumeAreAudited(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h := e.h
	_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO river_queue (name, created_at, metadata, updated_at)
		VALUES ('default', now(), '{}', now()) ON CONFLICT (name) DO NOTHING`)
	require.NoError(t, err)
	cookie := riverUICookie(t, h, e.admin.Email)
	put := func(path string) *apitest.Response {
		t.Helper()
		return h.Do("PUT", "/admin/river/api/queues/"+path, nil, "", cookie...)
	}
	paused := func() bool {
		t.Helper()
		return h.Count("SELECT count(*) FROM river_queue WHERE name = 'default' AND paused_at IS NOT NULL") == 1
	}

	r := put("default/pause")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.JSONEq(t, `{"status":"ok"}`, string(r.Body))
	require.True(t, paused())
	require.Equal(t, 1, riverUIAudit(t, h, "QUEUE_PAUSED", "QUEUE", "default"))
	details, user := riverUIAuditDetails(t, h, "QUEUE_PAUSED", "default")
	require.Equal(t, map[string]any{"queue": "default", "pausedBefore": false, "via": "river-ui"}, details)
	require.Equal(t, e.admin.ID.String(), user)
	// River UI shows it paused.
	q := h.Do("GET", "/admin/river/api/queues/default", nil, "", cookie...)
	require.Equal(t, http.StatusOK, q.Status, "%s", q.Body)
	require.NotNil(t, q.JSON(t)["paused_at"])

	r = put("default/resume")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.False(t, paused())
	require.Equal(t, 1, riverUIAudit(t, h, "QUEUE_RESUMED", "QUEUE", "default"))
	details, _ = riverUIAuditDetails(t, h, "QUEUE_RESUMED", "default")
	require.Equal(t, true, details["pausedBefore"])

	// An unknown queue, or River's "every queue" name, is 404 and audits nothing.
	before := riverUIAuditAll(t, h)
	for _, p := range []string{"nope/pause", "nope/resume", "*/pause", "%2A/pause"} {
		apitest.RequireProblem(t, put(p), http.StatusNotFound, "NOT_FOUND", apitest.Reason("QUEUE_NOT_FOUND"))
	}
	require.False(t, paused())
	require.Equal(t, before, riverUIAuditAll(t, h))
}

// TestRiverUICancelAuditRowIsWritten runs the workers so the audit job of a River UI
// cancel becomes a row in audit_events.
func TestRiverUICancelAuditRowIsWritten(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h := e.h
	id := jobInsert(t, h, jobSpec{kind: "test.later", state: "scheduled", scheduledAgo: -24 * time.Hour})
	r := h.Do("POST", "/admin/river/api/jobs/cancel", map[string]any{"ids": []string{fmt.Sprint(id)}}, "",
		riverUICookie(t, h, e.admin.Email)...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	h.StartWorkers()
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count(`SELECT count(*) FROM audit_events WHERE action = 'JOB_CANCELLED' AND level = 'WRITE'
			AND resource_type = 'JOB' AND resource_id = $1 AND user_id = $2 AND details::jsonb->>'via' = 'river-ui'`,
			fmt.Sprint(id), e.admin.ID) == 1
	}, "JOB_CANCELLED audit row")
}
