package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// auditRow is one audit_events row written straight into the table (the API has no
// way to write one; the worker's path is covered by audit_test.go).
type auditRow struct {
	ID           uuid.UUID
	At           time.Time
	UserID       *uuid.UUID
	Email        string
	ProjectID    *uuid.UUID
	Action       string
	Level        string
	ResourceType *string
	ResourceID   *string
	IP           *string
	Details      *string
}

// auditT0 is the base instant of the seeded rows, far from now so no worker row mixes in.
var auditT0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// auditID is a fixed id whose order is its number, so tie-breaks are predictable.
func auditID(n int) uuid.UUID { return uuid.MustParse(fmt.Sprintf("00000000-0000-4000-8000-%012d", n)) }

func auditStr(s string) *string { return &s }

func auditSeed(t *testing.T, h *apitest.Harness, rows ...auditRow) {
	t.Helper()
	for _, r := range rows {
		if r.ID == uuid.Nil {
			r.ID = uuid.New()
		}
		if r.Email == "" {
			r.Email = "system"
		}
		_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO audit_events (id, "timestamp", user_id, user_email, project_id,
			action, level, resource_type, resource_id, ip_address, details) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			r.ID, r.At, r.UserID, r.Email, r.ProjectID, r.Action, r.Level, r.ResourceType, r.ResourceID, r.IP, r.Details)
		require.NoError(t, err)
	}
}

// auditIDs are the ids of a page's content, in order.
func auditIDs(t *testing.T, r *apitest.Response) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var ids []string
	for _, e := range r.JSON(t)["content"].([]any) {
		ids = append(ids, e.(map[string]any)["id"].(string))
	}
	return ids
}

// auditAdmin registers a system ADMIN (and a first user before it, so the harness's
// first-user rule cannot be what made it one).
func auditAdmin(h *apitest.Harness) apitest.User {
	u := h.Register("AuditAdmin")
	h.MakeAdmin(u)
	return u
}

func TestAuditListFiltersOrderAndShape(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	admin := auditAdmin(h)
	ann, bob := h.Register("Ann"), h.Register("Bob")
	key := apitest.PostProject(t, h, admin.Access)
	pid := uuid.MustParse(h.Do("GET", "/api/v1/projects/"+key, nil, admin.Access).JSON(t)["id"].(string))

	auditSeed(t, h,
		auditRow{ID: auditID(1), At: auditT0, UserID: &ann.ID, Email: ann.Email, Action: "LOGIN_SUCCESS", Level: "SECURITY",
			ResourceType: auditStr("USER"), ResourceID: auditStr(ann.ID.String()), IP: auditStr("203.0.113.7")},
		auditRow{ID: auditID(2), At: auditT0.Add(time.Hour), UserID: &bob.ID, Email: bob.Email, ProjectID: &pid,
			Action: "ISSUE_CREATED", Level: "WRITE", Details: auditStr(`{"key":"X-1"}`)},
		auditRow{ID: auditID(3), At: auditT0.Add(2 * time.Hour), UserID: &ann.ID, Email: ann.Email, Action: "ISSUE_VIEWED", Level: "ALL"},
		// Same instant as 3: the higher id comes first.
		auditRow{ID: auditID(4), At: auditT0.Add(2 * time.Hour), Action: "SLA_BREACHED", Level: "WRITE", ProjectID: &pid},
		auditRow{ID: auditID(5), At: auditT0.Add(3 * time.Hour), UserID: &ann.ID, Email: ann.Email, Action: "LOGOUT", Level: "SECURITY"},
	)
	ids := func(n ...int) []string {
		var out []string
		for _, i := range n {
			out = append(out, auditID(i).String())
		}
		return out
	}
	list := func(query string) []string {
		t.Helper()
		return auditIDs(t, h.Do("GET", "/api/v1/admin/audit?"+query, nil, admin.Access))
	}

	require.Equal(t, ids(5, 4, 3, 2, 1), list(""), "timestamp desc, then id desc")
	// from is inclusive, to exclusive.
	at := func(d time.Duration) string { return url.QueryEscape(auditT0.Add(d).Format(time.RFC3339)) }
	require.Equal(t, ids(4, 3, 2), list("from="+at(time.Hour)+"&to="+at(3*time.Hour)))
	require.Equal(t, ids(2, 1), list("to="+at(2*time.Hour)))
	require.Equal(t, ids(5), list("from="+at(3*time.Hour)))
	require.Empty(t, list("from="+at(time.Hour)+"&to="+at(time.Hour)), "an empty window")
	// Offsets and fractions; an unencoded '+' arrives as a space and still works.
	require.Equal(t, ids(5, 4, 3, 2, 1), list("from="+url.QueryEscape("2026-03-01T11:00:00+01:00")))
	require.Equal(t, ids(5, 4, 3, 2), list("from=2026-03-01T11:00:00.000001+01:00"))
	require.Equal(t, ids(5, 3, 1), list("userId="+ann.ID.String()))
	require.Equal(t, ids(2), list("action=ISSUE_CREATED"))
	require.Empty(t, list("action=NEVER_RECORDED"))
	require.Equal(t, ids(5, 1), list("level=SECURITY"))
	require.Equal(t, ids(4, 2), list("level=WRITE"))
	require.Equal(t, ids(3), list("level=ALL"), "ALL is a level, not a wildcard")
	require.Equal(t, ids(1), list("userId="+ann.ID.String()+"&level=SECURITY&to="+at(time.Hour)), "filters combine with AND")

	page := h.Do("GET", "/api/v1/admin/audit?action=ISSUE_CREATED", nil, admin.Access).JSON(t)
	require.Equal(t, map[string]any{
		"id": auditID(2).String(), "timestamp": "2026-03-01T11:00:00Z", "userEmail": bob.Email, "userId": bob.ID.String(),
		"projectId": pid.String(), "action": "ISSUE_CREATED", "level": "WRITE", "resourceType": nil, "resourceId": nil,
		"ipAddress": nil, "orgId": nil, "details": `{"key":"X-1"}`, "userAgent": nil,
	}, page["content"].([]any)[0])
	first := h.Do("GET", "/api/v1/admin/audit?action=LOGIN_SUCCESS", nil, admin.Access).JSON(t)["content"].([]any)[0].(map[string]any)
	require.Equal(t, "USER", first["resourceType"])
	require.Equal(t, ann.ID.String(), first["resourceId"])
	require.Equal(t, "203.0.113.7", first["ipAddress"])
}

func TestAuditListRefusesBadQueries(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	admin := auditAdmin(h)
	for query, reason := range map[string]string{
		"from=yesterday":                                    "INVALID_INSTANT",
		"to=2026-13-01T00:00:00Z":                           "INVALID_INSTANT",
		"from=2026-03-01":                                   "INVALID_INSTANT",
		"from=2026-03-01T10:00:00":                          "INVALID_INSTANT",
		"from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z": "INVALID_TIME_RANGE",
		"userId=abc":                                        "INVALID_UUID",
		"userId=" + strings32hex():                          "INVALID_UUID",
		"level=NOPE":                                        "UNKNOWN_AUDIT_LEVEL",
		"level=security":                                    "UNKNOWN_AUDIT_LEVEL",
		"action=" + url.QueryEscape("x'; DROP TABLE audit_events; --"): "INVALID_QUERY",
		"action=login_success": "INVALID_QUERY",
		"page=-1":              "INVALID_PAGE",
		"size=0":               "INVALID_PAGE",
		"size=x":               "INVALID_PAGE",
		"page=9999999999999":   "INVALID_PAGE",
	} {
		r := h.Do("GET", "/api/v1/admin/audit?"+query, nil, admin.Access)
		apitest.RequireProblem(t, r, http.StatusBadRequest, "BAD_REQUEST", apitest.ReasonOrNone(reason))
	}
	// The message is localized and names the problem.
	r := h.Do("GET", "/api/v1/admin/audit?from=x", nil, admin.Access, "Accept-Language", "de")
	require.Contains(t, r.JSON(t)["message"], "from muss ein Zeitpunkt")
	r = h.Do("GET", "/api/v1/admin/audit?level=NOPE", nil, admin.Access)
	require.Equal(t, "Unknown audit level NOPE.", r.JSON(t)["message"])
}

// strings32hex is a UUID without dashes, which uuid.Parse would take but the API refuses.
func strings32hex() string { return "0123456789abcdef0123456789abcdef" }

func TestAuditListPaging(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	admin := auditAdmin(h)
	// 205 rows, ten per instant, so the id tie-break decides inside each group.
	_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO audit_events (id, "timestamp", user_email, action, level)
		SELECT gen_random_uuid(), $1::timestamptz + (i / 10) * interval '1 minute', 'system', 'ISSUE_CREATED', 'WRITE'
		FROM generate_series(0, 204) AS i`, auditT0)
	require.NoError(t, err)

	p := h.Do("GET", "/api/v1/admin/audit", nil, admin.Access).JSON(t)
	require.Len(t, p["content"], 50)
	require.Equal(t, []any{0.0, 50.0, 205.0, 5.0, 50.0, true, false, false},
		[]any{p["number"], p["size"], p["totalElements"], p["totalPages"], p["numberOfElements"], p["first"], p["last"], p["empty"]})
	require.Equal(t, map[string]any{"pageNumber": 0.0, "pageSize": 50.0, "offset": 0.0, "paged": true, "unpaged": false,
		"sort": map[string]any{"empty": true, "sorted": false, "unsorted": true}}, p["pageable"])

	p = h.Do("GET", "/api/v1/admin/audit?size=500", nil, admin.Access).JSON(t)
	require.Equal(t, 200.0, p["size"], "clamped")
	require.Len(t, p["content"], 200)
	require.Equal(t, 2.0, p["totalPages"])

	p = h.Do("GET", "/api/v1/admin/audit?size=200&page=1", nil, admin.Access).JSON(t)
	require.Len(t, p["content"], 5)
	require.Equal(t, true, p["last"])
	p = h.Do("GET", "/api/v1/admin/audit?page=9", nil, admin.Access).JSON(t)
	require.Equal(t, []any{[]any{}, true, 205.0}, []any{p["content"], p["empty"], p["totalElements"]})

	// Pages of 7 cover every row exactly once, in the order of the whole list.
	var all []string
	for page := 0; page*7 < 205; page++ {
		all = append(all, auditIDs(t, h.Do("GET", fmt.Sprintf("/api/v1/admin/audit?size=7&page=%d", page), nil, admin.Access))...)
	}
	whole := auditIDs(t, h.Do("GET", "/api/v1/admin/audit?size=200", nil, admin.Access))
	whole = append(whole, auditIDs(t, h.Do("GET", "/api/v1/admin/audit?size=200&page=1", nil, admin.Access))...)
	require.Len(t, all, 205)
	require.Equal(t, whole, all)
	seen := map[string]bool{}
	for _, id := range all {
		require.False(t, seen[id], "id %s on two pages", id)
		seen[id] = true
	}
}

func TestAuditAdminEndpointsNeedSystemAdmin(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	plain := h.Register("PlainAuditor")
	h.SetSystemRole(plain, "MEMBER")
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/admin/audit"}, {"GET", "/api/v1/admin/audit/export"}, {"GET", "/api/v1/admin/audit/export?format=csv"},
		{"GET", "/api/v1/admin/audit/config"}, {"PUT", "/api/v1/admin/audit/config"},
	} {
		var body any
		if c.method == "PUT" {
			body = map[string]any{"level": "WRITE", "enabled": true}
		}
		apitest.RequireProblem(t, h.Do(c.method, c.path, body, plain.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("ADMIN_ONLY"))
		require.Equal(t, http.StatusUnauthorized, h.Do(c.method, c.path, body, "").Status, "%s %s", c.method, c.path)
	}
	require.Equal(t, 0, h.Count("SELECT count(*) FROM river_job WHERE args->>'action' = 'AUDIT_CONFIG_CHANGED' AND args->>'userEmail' = $1", plain.Email))
}

func TestProjectAuditRolesAndScope(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	sys := auditAdmin(h)
	owner := h.Register("Owner")
	h.SetSystemRole(owner, "MEMBER")
	key := apitest.PostProject(t, h, owner.Access)
	other := apitest.PostProject(t, h, owner.Access)
	pid := uuid.MustParse(h.Do("GET", "/api/v1/projects/"+key, nil, owner.Access).JSON(t)["id"].(string))
	oid := uuid.MustParse(h.Do("GET", "/api/v1/projects/"+other, nil, owner.Access).JSON(t)["id"].(string))
	roles := map[string]apitest.User{}
	for _, role := range []string{"ADMIN", "MEMBER", "VIEWER"} {
		u := h.Register("P" + role)
		h.SetSystemRole(u, "MEMBER")
		apitest.PostMember(t, h, owner.Access, key, u.ID, role)
		roles[role] = u
	}
	outsider := h.Register("Outsider")
	h.SetSystemRole(outsider, "MEMBER")
	// An organization ADMIN inherits ADMIN on the organization's projects.
	org := apitest.PostOrganization(t, h, sys.Access)
	orgAdmin := h.Register("OrgAdmin")
	h.SetSystemRole(orgAdmin, "MEMBER")
	apitest.PostOrgMember(t, h, sys.Access, org, orgAdmin.ID, "ADMIN")
	require.Equal(t, http.StatusOK, h.Do("PATCH", "/api/v1/projects/"+key+"/organization", map[string]any{"orgId": org}, sys.Access).Status)

	auditSeed(t, h,
		auditRow{ID: auditID(1), At: auditT0, ProjectID: &pid, Action: "ISSUE_CREATED", Level: "WRITE", UserID: &owner.ID, Email: owner.Email},
		auditRow{ID: auditID(2), At: auditT0.Add(time.Hour), ProjectID: &oid, Action: "ISSUE_CREATED", Level: "WRITE"},
		auditRow{ID: auditID(3), At: auditT0.Add(2 * time.Hour), ProjectID: &pid, Action: "MEMBER_ADDED", Level: "WRITE"},
		auditRow{ID: auditID(4), At: auditT0.Add(3 * time.Hour), Action: "LOGIN_SUCCESS", Level: "SECURITY", UserID: &owner.ID, Email: owner.Email},
		auditRow{ID: auditID(5), At: auditT0.Add(4 * time.Hour), ProjectID: &pid, Action: "ISSUE_VIEWED", Level: "ALL"},
	)
	path := "/api/v1/projects/" + key + "/audit"
	mine := []string{auditID(5).String(), auditID(3).String(), auditID(1).String()}

	for name, token := range map[string]string{
		"system ADMIN, not a member": sys.Access, "project ADMIN": roles["ADMIN"].Access, "owner": owner.Access,
		"organization ADMIN": orgAdmin.Access,
	} {
		r := h.Do("GET", path, nil, token)
		require.Equal(t, mine, auditIDs(t, r), name)
		require.Equal(t, 3.0, r.JSON(t)["totalElements"], name)
	}
	apitest.RequireProblem(t, h.Do("GET", path, nil, roles["MEMBER"].Access), http.StatusForbidden, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("GET", path, nil, roles["VIEWER"].Access), http.StatusForbidden, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("GET", path, nil, outsider.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", path, nil, "").Status)
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/projects/NOSUCH1/audit", nil, sys.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/projects/NOSUCH1/audit", nil, roles["ADMIN"].Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))

	// The project list's own filters; userId and level are not offered here and do not
	// widen the scope.
	list := func(query string) []string {
		return auditIDs(t, h.Do("GET", path+"?"+query, nil, roles["ADMIN"].Access))
	}
	require.Equal(t, []string{auditID(3).String()}, list("action=MEMBER_ADDED"))
	require.Equal(t, []string{auditID(3).String(), auditID(1).String()},
		list("from="+url.QueryEscape(auditT0.Format(time.RFC3339))+"&to="+url.QueryEscape(auditT0.Add(4*time.Hour).Format(time.RFC3339))))
	require.Equal(t, mine, list("level=SECURITY&userId="+uuid.NewString()))
	p := h.Do("GET", path+"?size=2&page=1", nil, roles["ADMIN"].Access).JSON(t)
	require.Equal(t, []any{2.0, 3.0, 2.0, 1.0}, []any{p["size"], p["totalElements"], p["totalPages"], p["numberOfElements"]})
	apitest.RequireProblem(t, h.Do("GET", path+"?from=soon", nil, roles["ADMIN"].Access), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_INSTANT"))
	apitest.RequireProblem(t, h.Do("GET", path+"?size=0", nil, roles["ADMIN"].Access), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_PAGE"))
}

func TestAuditConfigRoundTrip(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	admin := auditAdmin(h)
	get := func() []any {
		t.Helper()
		r := h.Do("GET", "/api/v1/admin/audit/config", nil, admin.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return r.Array(t)
	}
	setting := func(level string, on bool) map[string]any { return map[string]any{"level": level, "enabled": on} }
	put := func(level string, on bool) {
		t.Helper()
		r := h.Do("PUT", "/api/v1/admin/audit/config", setting(level, on), admin.Access, "User-Agent", "audit-test")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Empty(t, r.Body, "200 with an empty body")
	}
	changes := func() int {
		return h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'AUDIT_CONFIG_CHANGED'")
	}
	require.Equal(t, []any{setting("SECURITY", true), setting("WRITE", false), setting("ALL", false)}, get())

	put("ALL", true) // WRITE is off: the change is stored but not recorded
	require.Equal(t, []any{setting("SECURITY", true), setting("WRITE", false), setting("ALL", true)}, get())
	require.Equal(t, 0, changes())

	put("WRITE", true) // recorded: WRITE is on after the change
	require.Equal(t, 1, changes())
	put("WRITE", true) // no change, nothing recorded
	require.Equal(t, 1, changes())
	put("ALL", false)
	require.Equal(t, 2, changes())
	put("WRITE", false) // recorded: WRITE was still on
	require.Equal(t, 3, changes())
	put("SECURITY", false)
	require.Equal(t, 3, changes(), "WRITE is off")
	require.Equal(t, []any{setting("SECURITY", false), setting("WRITE", false), setting("ALL", false)}, get())

	// SECURITY is recorded whatever its toggle says.
	require.Equal(t, http.StatusNoContent, h.Do("POST", "/api/v1/auth/logout", nil, admin.Access).Status)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE args->>'action' = 'LOGOUT' AND args->>'level' = 'SECURITY'"))

	// The worker writes the change rows with who, what and where from.
	h.StartWorkers()
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM audit_events WHERE action = 'AUDIT_CONFIG_CHANGED'") == 3
	}, "config change rows written")
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM audit_events WHERE action = 'AUDIT_CONFIG_CHANGED' AND level = 'WRITE'
		AND user_id = $1 AND user_email = $2 AND user_agent = 'audit-test' AND resource_type IS NULL
		AND details::jsonb = '{"level":"WRITE","enabled":false,"previous":true}'::jsonb`, admin.ID, admin.Email))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM audit_events WHERE action = 'AUDIT_CONFIG_CHANGED'
		AND details::jsonb = '{"level":"WRITE","enabled":true,"previous":false}'::jsonb`))
}

func TestAuditConfigRefusesBadBodies(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	admin := auditAdmin(h)
	for body, reason := range map[string]string{
		`{}`:                                     "MISSING_FIELD",
		`{"level":"WRITE"}`:                      "MISSING_FIELD",
		`{"enabled":true}`:                       "MISSING_FIELD",
		`{"level":null,"enabled":true}`:          "MISSING_FIELD",
		`{"level":"NOPE","enabled":true}`:        "UNKNOWN_AUDIT_LEVEL",
		`{"level":"write","enabled":true}`:       "UNKNOWN_AUDIT_LEVEL",
		`{"level":1,"enabled":true}`:             "WRONG_TYPE",
		`{"level":"WRITE","enabled":"yes"}`:      "WRONG_TYPE",
		`not json`:                               "MALFORMED_JSON",
		`[{"level":"WRITE","enabled":true}]`:     "MALFORMED_JSON",
		`{"level":"WR\u0000ITE","enabled":true}`: "NUL_CHARACTER",
	} {
		r := h.Do("PUT", "/api/v1/admin/audit/config", body, admin.Access)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", body, r.Body)
		require.Equal(t, reason, r.JSON(t)["reason"], body)
	}
	r := h.Do("PUT", "/api/v1/admin/audit/config", `{"level":"NOPE-NOPE-NOPE-NOPE-NOPE-NOPE","enabled":true}`, admin.Access)
	require.Equal(t, "Unknown audit level NOPE-NOPE-NOPE-NOPE-….", r.JSON(t)["message"], "a long value is cut in the message")
}

// TestAuditEventsCannotBeChangedThroughTheAPI: no route writes an audit event, and the
// table refuses a change made any other way.
func TestAuditEventsCannotBeChangedThroughTheAPI(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	admin := auditAdmin(h)
	key := apitest.PostProject(t, h, admin.Access)
	auditSeed(t, h, auditRow{ID: auditID(1), At: auditT0, Action: "LOGIN_SUCCESS", Level: "SECURITY"})
	one := "/api/v1/admin/audit/" + auditID(1).String()
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"POST", "/api/v1/admin/audit", 405}, {"PUT", "/api/v1/admin/audit", 405}, {"PATCH", "/api/v1/admin/audit", 405},
		{"DELETE", "/api/v1/admin/audit", 405},
		{"GET", one, 404}, {"PUT", one, 404}, {"PATCH", one, 404}, {"DELETE", one, 404},
		{"DELETE", "/api/v1/admin/audit/config", 405}, {"POST", "/api/v1/admin/audit/export", 405},
		{"PUT", "/api/v1/projects/" + key + "/audit", 405}, {"DELETE", "/api/v1/projects/" + key + "/audit", 405},
		{"DELETE", "/api/v1/projects/" + key + "/audit/" + auditID(1).String(), 404},
	} {
		r := h.Do(c.method, c.path, map[string]any{"action": "CHANGED"}, admin.Access)
		require.Equal(t, c.want, r.Status, "%s %s: %s", c.method, c.path, r.Body)
	}
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM audit_events WHERE id = $1 AND action = 'LOGIN_SUCCESS'`, auditID(1)))

	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE audit_events SET action = 'CHANGED'")
	require.ErrorContains(t, err, "audit events are immutable")
	_, err = h.DB.Pool.Exec(context.Background(), "DELETE FROM audit_events")
	require.ErrorContains(t, err, "audit events are immutable")
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM audit_events WHERE action = 'LOGIN_SUCCESS'`))
}
