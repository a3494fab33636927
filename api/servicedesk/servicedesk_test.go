package servicedesk_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/workers"
)

// deskFixture is an issueFixture whose project has an enabled desk.
type deskFixture struct {
	*apitest.Project
	deskID string
}

func deskFixtureOn(t *testing.T, h *apitest.Harness) *deskFixture {
	t.Helper()
	f := apitest.NewProject(t, h)
	r := h.Do("POST", f.Path("/service-desk/enable"), map[string]any{"emailAddress": nil}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return &deskFixture{Project: f, deskID: r.JSON(t)["id"].(string)}
}

// ticket submits a ticket without credentials and returns the receipt.
func (f *deskFixture) ticket(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := f.H.Do("POST", f.Path("/service-desk/tickets"), body, "")
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// policy creates an SLA policy as the owner and returns it.
func (f *deskFixture) policy(t *testing.T, priority string, response, resolution int) map[string]any {
	t.Helper()
	r := f.H.Do("POST", f.Path("/service-desk/sla-policies"), map[string]any{"name": priority + " SLA", "priority": priority,
		"responseMinutes": response, "resolutionMinutes": resolution}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.JSON(t)
}

func TestServiceDeskEnable(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)

	apitest.RequireProblem(t, h.Do("GET", f.Path("/service-desk"), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("SERVICE_DESK_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/enable"), map[string]any{}, f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/enable"), map[string]any{"emailAddress": "not an address"}, f.Owner.Access),
		400, "VALIDATION_ERROR", apitest.NoReason)

	addr := "help-" + strings.ToLower(f.Key) + "@example.com"
	r := h.Do("POST", f.Path("/service-desk/enable"), map[string]any{"emailAddress": addr}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	desk := r.JSON(t)
	require.Equal(t, f.ProjectID.String(), desk["projectId"])
	require.Equal(t, addr, desk["emailAddress"])
	require.Equal(t, true, desk["enabled"])

	// Any role reads it; outsiders do not.
	got := h.Do("GET", f.Path("/service-desk"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, got.Status)
	require.Equal(t, desk, got.JSON(t))
	apitest.RequireProblem(t, h.Do("GET", f.Path("/service-desk"), nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))

	// Enabling again keeps the desk, re-enables it and replaces the address (an empty
	// body clears it).
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE service_desks SET enabled = false WHERE id = $1", desk["id"])
	require.NoError(t, err)
	again := h.Do("POST", f.Path("/service-desk/enable"), nil, f.Owner.Access).JSON(t)
	require.Equal(t, desk["id"], again["id"])
	require.Equal(t, true, again["enabled"])
	require.Nil(t, again["emailAddress"])
	require.Equal(t, 1, h.Count("SELECT count(*) FROM service_desks WHERE project_id = $1", f.ProjectID))

	// A proven address is one desk's, compared case-insensitively; a pending one blocks
	// nobody.
	require.Equal(t, http.StatusOK, h.Do("POST", f.Path("/service-desk/enable"), map[string]any{"emailAddress": addr}, f.Owner.Access).Status)
	other := apitest.NewProject(t, h)
	pending := h.Do("POST", other.Path("/service-desk/enable"), map[string]any{"emailAddress": strings.ToUpper(addr)}, other.Owner.Access)
	require.Equal(t, http.StatusOK, pending.Status, "%s", pending.Body)
	require.Equal(t, "PENDING", pending.JSON(t)["emailAddressStatus"])
	sys := h.Register("Sys")
	h.MakeAdmin(sys)
	require.Equal(t, http.StatusOK, h.Do("POST", "/api/v1/admin/service-desk/addresses/"+f.Key+"/approve", map[string]any{"emailAddress": addr}, sys.Access).Status)
	apitest.RequireProblem(t, h.Do("POST", other.Path("/service-desk/enable"), map[string]any{"emailAddress": strings.ToUpper(addr)}, other.Owner.Access),
		409, "CONFLICT", apitest.Reason("DESK_EMAIL_TAKEN"))
}

func TestTicketSubmission(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	body := map[string]any{"title": "Printer on fire", "description": "Third floor.", "senderEmail": "Ann@Example.com"}

	// Without a desk (or project) the form is not found.
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/tickets"), body, ""), 404, "NOT_FOUND", apitest.Reason("SERVICE_DESK_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("POST", "/api/v1/projects/NOPE9/service-desk/tickets", body, ""), 404, "NOT_FOUND", apitest.Reason("SERVICE_DESK_NOT_FOUND"))
	require.Equal(t, http.StatusOK, h.Do("POST", f.Path("/service-desk/enable"), nil, f.Owner.Access).Status)
	df := &deskFixture{Project: f}

	apitest.SetAuditLevel(t, h, "WRITE", true)
	receipt := df.ticket(t, body)
	require.Equal(t, "RECEIVED", receipt["status"])
	key := receipt["issueKey"].(string)
	require.True(t, strings.HasPrefix(key, f.Key+"-"), key)
	id := receipt["ticketId"].(string)

	iss := f.Get(t, key)
	require.Equal(t, id, iss["id"])
	require.Equal(t, "TASK", iss["type"])
	require.Equal(t, "MEDIUM", iss["priority"])
	require.Equal(t, f.Owner.ID.String(), iss["reporterId"])
	require.Equal(t, "**From:** Ann@Example.com\n\nThird floor.", iss["description"])
	require.Equal(t, 1, h.Count("SELECT count(*) FROM service_desk_tickets WHERE issue_id = $1 AND channel = 'WEB' AND sender_email = 'Ann@Example.com'", id))
	// Created like any issue: the audit job of ISSUE_CREATED commits with the ticket.
	require.Equal(t, []string{"ISSUE_CREATED"}, apitest.IssueAuditJobs(t, h, id))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job AS j, service_desk_tickets AS t WHERE t.issue_id = $1
		AND j.args->>'resourceId' = $1::text AND j.xmin = t.xmin`, id))
	require.Equal(t, 1.0, metricVec(t, h, "taskweave_servicedesk_tickets_total", "WEB"))

	anon := df.ticket(t, map[string]any{"title": "No name"})
	require.Equal(t, "**From:** anonymous\n\n", f.Get(t, anon["issueKey"].(string))["description"])

	for _, tc := range []struct {
		body         any
		code, reason string
		field        string
		status       int
	}{
		{map[string]any{}, "BAD_REQUEST", "MISSING_FIELD", "", 400},
		{`{"title":`, "BAD_REQUEST", "MALFORMED_JSON", "", 400},
		{map[string]any{"title": 7}, "BAD_REQUEST", "WRONG_TYPE", "", 400},
		{map[string]any{"title": "  "}, "VALIDATION_ERROR", "", "title", 400},
		{map[string]any{"title": strings.Repeat("x", 256)}, "VALIDATION_ERROR", "", "title", 400},
		{map[string]any{"title": "ok", "description": strings.Repeat("x", 5001)}, "VALIDATION_ERROR", "", "description", 400},
		{map[string]any{"title": "ok", "senderEmail": "nobody"}, "VALIDATION_ERROR", "", "senderEmail", 400},
		{map[string]any{"title": "ok", "senderEmail": strings.Repeat("a", 250) + "@x.com"}, "VALIDATION_ERROR", "", "senderEmail", 400},
	} {
		r := h.Do("POST", f.Path("/service-desk/tickets"), tc.body, "")
		apitest.RequireProblem(t, r, tc.status, tc.code, apitest.ReasonOrNone(tc.reason))
		if tc.field != "" {
			require.Contains(t, r.JSON(t)["details"], tc.field, "%s", r.Body)
		}
	}
	require.Equal(t, 2, h.Count("SELECT count(*) FROM service_desk_tickets"))
	// A description of exactly 5000 characters is fine.
	df.ticket(t, map[string]any{"title": "Long", "description": strings.Repeat("y", 5000)})
}

// metricVec reads one labelled counter of the harness's API registry.
func metricVec(t *testing.T, h *apitest.Harness, name, label string) float64 {
	t.Helper()
	mfs, err := h.Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("metric %s{%s} not found", name, label)
	return 0
}

func TestTicketRateLimit(t *testing.T) {
	t.Parallel()
	base := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, base)
	require.Equal(t, http.StatusOK, base.Do("POST", f.Path("/service-desk/enable"), nil, f.Owner.Access).Status)
	h := apitest.New(t, apitest.Options{DB: base.DB, Configure: apitest.LimitedAuth(2, time.Minute)})
	from := func(ip string) []string { return []string{"X-Forwarded-For", ip} }
	body := map[string]any{"title": "Help"}
	require.Equal(t, http.StatusCreated, h.Do("POST", f.Path("/service-desk/tickets"), body, "", from("10.7.0.1")...).Status)
	require.Equal(t, http.StatusCreated, h.Do("POST", f.Path("/service-desk/tickets"), body, "", from("10.7.0.1")...).Status)
	r := h.Do("POST", f.Path("/service-desk/tickets"), body, "", from("10.7.0.1")...)
	apitest.RequireProblem(t, r, 429, "RATE_LIMITED", apitest.NoReason)
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	// Another address has its own window, and logging in is not counted against tickets.
	require.Equal(t, http.StatusCreated, h.Do("POST", f.Path("/service-desk/tickets"), body, "", from("10.7.0.2")...).Status)
	login := map[string]any{"email": "x@example.com", "password": "whatever1"}
	require.Equal(t, http.StatusForbidden, h.Do("POST", "/api/v1/auth/login", login, "", from("10.7.0.1")...).Status)
	require.Equal(t, 3, h.Count("SELECT count(*) FROM service_desk_tickets"))
}

func TestTicketList(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := deskFixtureOn(t, h)
	apitest.RequireProblem(t, h.Do("GET", f.Path("/service-desk/tickets"), nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))

	plain := f.Create(t, map[string]any{"title": "Not a ticket"})
	first := f.ticket(t, map[string]any{"title": "First", "senderEmail": "a@example.com"})
	second := f.ticket(t, map[string]any{"title": "Second"})
	third := f.ticket(t, map[string]any{"title": "Third"})
	f.policy(t, "HIGH", 30, 60)

	// Tickets only, newest first, with the status name and where they came from.
	list := h.Do("GET", f.Path("/service-desk/tickets"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, list.Status, "%s", list.Body)
	items := list.Array(t)
	require.Len(t, items, 3)
	keys := []string{}
	for _, it := range items {
		keys = append(keys, it.(map[string]any)["key"].(string))
		require.NotEqual(t, plain["key"], it.(map[string]any)["key"])
	}
	require.Equal(t, []string{third["issueKey"].(string), second["issueKey"].(string), first["issueKey"].(string)}, keys)
	last := items[2].(map[string]any)
	require.Equal(t, "To Do", last["status"])
	require.Equal(t, "TODO", last["statusCategory"])
	require.Equal(t, "a@example.com", last["senderEmail"])
	require.Equal(t, "WEB", last["channel"])
	require.Nil(t, last["slaDueAt"])
	require.Equal(t, false, last["breached"])
	require.Contains(t, last, "slaStartTime")
	require.Equal(t, []any{}, last["labels"])

	// Paging picks the slice.
	page := h.Do("GET", f.Path("/service-desk/tickets?page=1&size=2"), nil, f.Owner.Access).Array(t)
	require.Len(t, page, 1)
	require.Equal(t, first["issueKey"], page[0].(map[string]any)["key"])
	apitest.RequireProblem(t, h.Do("GET", f.Path("/service-desk/tickets?size=0"), nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_PAGE"))

	// A HIGH ticket in progress gets a due time from the HIGH policy; one started two
	// hours ago is breached.
	f.Patch(t, first["ticketId"].(string), map[string]any{"priority": "HIGH", "statusId": f.Prog})
	f.Patch(t, second["ticketId"].(string), map[string]any{"priority": "HIGH", "statusId": f.Prog})
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE issues SET sla_start_time = now() - interval '2 hours' WHERE id = $1", second["ticketId"])
	require.NoError(t, err)
	byKey := map[string]map[string]any{}
	for _, it := range h.Do("GET", f.Path("/service-desk/tickets"), nil, f.Owner.Access).Array(t) {
		m := it.(map[string]any)
		byKey[m["key"].(string)] = m
	}
	a := byKey[first["issueKey"].(string)]
	start, err := time.Parse(time.RFC3339Nano, a["slaStartTime"].(string))
	require.NoError(t, err)
	due, err := time.Parse(time.RFC3339Nano, a["slaDueAt"].(string))
	require.NoError(t, err)
	require.Equal(t, 60*time.Minute, due.Sub(start))
	require.Equal(t, false, a["breached"])
	require.Equal(t, true, byKey[second["issueKey"].(string)]["breached"])
	require.Nil(t, byKey[third["issueKey"].(string)]["slaDueAt"])
}

func TestSLAPolicies(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)
	body := map[string]any{"name": "Gold", "priority": "HIGH", "responseMinutes": 15, "resolutionMinutes": 240}
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/sla-policies"), body, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("SERVICE_DESK_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("GET", f.Path("/service-desk/sla-policies"), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("SERVICE_DESK_NOT_FOUND"))
	require.Equal(t, http.StatusOK, h.Do("POST", f.Path("/service-desk/enable"), nil, f.Owner.Access).Status)
	df := &deskFixture{Project: f}

	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/sla-policies"), body, f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	for _, tc := range []struct {
		change       map[string]any
		code, reason string
	}{
		{map[string]any{"priority": "URGENT"}, "BAD_REQUEST", "INVALID_ENUM"},
		{map[string]any{"priority": nil}, "BAD_REQUEST", "MISSING_FIELD"},
		{map[string]any{"resolutionMinutes": "60"}, "BAD_REQUEST", "WRONG_TYPE"},
		{map[string]any{"name": " "}, "VALIDATION_ERROR", ""},
		{map[string]any{"name": strings.Repeat("n", 101)}, "VALIDATION_ERROR", ""},
		{map[string]any{"responseMinutes": 0}, "VALIDATION_ERROR", ""},
		{map[string]any{"resolutionMinutes": 1_000_001}, "VALIDATION_ERROR", ""},
	} {
		b := map[string]any{}
		for k, v := range body {
			b[k] = v
		}
		for k, v := range tc.change {
			b[k] = v
		}
		apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/sla-policies"), b, f.Owner.Access), 400, tc.code, apitest.ReasonOrNone(tc.reason))
	}

	r := h.Do("POST", f.Path("/service-desk/sla-policies"), body, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	gold := r.JSON(t)
	require.Equal(t, "Gold", gold["name"])
	require.Equal(t, "HIGH", gold["priority"])
	require.Equal(t, 15.0, gold["responseMinutes"])
	require.Equal(t, 240.0, gold["resolutionMinutes"])
	require.Equal(t, []any{}, gold["escalationRules"])
	require.NotEmpty(t, gold["serviceDeskId"])
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/sla-policies"), body, f.Owner.Access), 409, "CONFLICT", apitest.Reason("SLA_POLICY_EXISTS"))
	low := df.policy(t, "LOW", 60, 2880)

	// Escalation rules: members only, ids checked, repeated recipients once.
	rules := f.Path("/service-desk/sla-policies/" + gold["id"].(string) + "/escalation-rules")
	apitest.RequireProblem(t, h.Do("POST", rules, map[string]any{"escalateAfterMinutes": 60}, f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("POST", rules, map[string]any{}, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))
	apitest.RequireProblem(t, h.Do("POST", rules, map[string]any{"escalateAfterMinutes": 0}, f.Owner.Access), 400, "VALIDATION_ERROR", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("POST", rules, map[string]any{"escalateAfterMinutes": 5, "assigneeId": "nope"}, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	apitest.RequireProblem(t, h.Do("POST", rules, map[string]any{"escalateAfterMinutes": 5, "notifyUserIds": []string{f.Outsider.ID.String()}}, f.Owner.Access),
		404, "NOT_FOUND", apitest.Reason("USER_NOT_MEMBER"))
	apitest.RequireProblem(t, h.Do("POST", rules, map[string]any{"escalateAfterMinutes": 5, "assigneeId": f.Outsider.ID}, f.Owner.Access),
		404, "NOT_FOUND", apitest.Reason("USER_NOT_MEMBER"))
	r = h.Do("POST", rules, map[string]any{"escalateAfterMinutes": 120, "assigneeId": f.Member.ID,
		"notifyUserIds": []string{f.Viewer.ID.String(), f.Owner.ID.String(), f.Viewer.ID.String()}}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	rule := r.JSON(t)
	require.Equal(t, gold["id"], rule["slaPolicyId"])
	require.Equal(t, 120.0, rule["escalateAfterMinutes"])
	require.Equal(t, f.Member.ID.String(), rule["assigneeId"])
	require.Equal(t, []any{f.Viewer.ID.String(), f.Owner.ID.String()}, rule["notifyUserIds"])
	bare := h.Do("POST", rules, map[string]any{"escalateAfterMinutes": 30}, f.Owner.Access).JSON(t)
	require.Nil(t, bare["assigneeId"])
	require.Equal(t, []any{}, bare["notifyUserIds"])

	list := h.Do("GET", f.Path("/service-desk/sla-policies"), nil, f.Viewer.Access).Array(t)
	require.Len(t, list, 2)
	require.Equal(t, gold["id"], list[0].(map[string]any)["id"])
	require.Len(t, list[0].(map[string]any)["escalationRules"], 2)
	require.Equal(t, low["id"], list[1].(map[string]any)["id"])

	// Another project's desk does not see this one's policies.
	other := deskFixtureOn(t, h)
	apitest.RequireProblem(t, h.Do("DELETE", other.Path("/service-desk/sla-policies/"+gold["id"].(string)), nil, other.Owner.Access),
		404, "NOT_FOUND", apitest.Reason("SLA_POLICY_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("POST", other.Path("/service-desk/sla-policies/"+gold["id"].(string)+"/escalation-rules"),
		map[string]any{"escalateAfterMinutes": 5}, other.Owner.Access), 404, "NOT_FOUND", apitest.Reason("SLA_POLICY_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("DELETE", f.Path("/service-desk/sla-policies/"+uuid.NewString()), nil, f.Owner.Access),
		404, "NOT_FOUND", apitest.Reason("SLA_POLICY_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("DELETE", f.Path("/service-desk/sla-policies/x"), nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))

	// Deleting a policy takes its rules and breach records with it.
	iss := f.Create(t, map[string]any{"title": "Breached", "priority": "HIGH"})
	_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO sla_reports (issue_id, sla_policy_id, kind, reported_at)
		VALUES ($1, $2, 'RESOLUTION', now())`, iss["id"], gold["id"])
	require.NoError(t, err)
	apitest.RequireProblem(t, h.Do("DELETE", f.Path("/service-desk/sla-policies/"+gold["id"].(string)), nil, f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", f.Path("/service-desk/sla-policies/"+gold["id"].(string)), nil, f.Owner.Access).Status)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM escalation_rules WHERE sla_policy_id = $1", gold["id"]))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sla_reports WHERE sla_policy_id = $1", gold["id"]))
	require.Len(t, h.Do("GET", f.Path("/service-desk/sla-policies"), nil, f.Owner.Access).Array(t), 1)
	apitest.RequireProblem(t, h.Do("DELETE", f.Path("/service-desk/sla-policies/"+gold["id"].(string)), nil, f.Owner.Access),
		404, "NOT_FOUND", apitest.Reason("SLA_POLICY_NOT_FOUND"))
}

func TestIncidents(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)
	iss := f.Create(t, map[string]any{"title": "Checkout down"})
	id := iss["id"].(string)

	apitest.RequireProblem(t, h.Do("POST", f.Path("/incidents"), map[string]any{"issueId": id, "severity": "P1"}, f.Viewer.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("POST", f.Path("/incidents"), map[string]any{"issueId": id, "severity": "P5"}, f.Member.Access),
		400, "BAD_REQUEST", apitest.Reason("INVALID_ENUM"))
	apitest.RequireProblem(t, h.Do("POST", f.Path("/incidents"), map[string]any{"severity": "P1"}, f.Member.Access), 400, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))
	apitest.RequireProblem(t, h.Do("POST", f.Path("/incidents"), map[string]any{"issueId": "x", "severity": "P1"}, f.Member.Access),
		400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	apitest.RequireProblem(t, h.Do("POST", f.Path("/incidents"), map[string]any{"issueId": id, "severity": "P1", "onCallAssigneeId": f.Outsider.ID},
		f.Member.Access), 404, "NOT_FOUND", apitest.Reason("USER_NOT_MEMBER"))
	other := apitest.NewProject(t, h)
	foreign := other.Create(t, map[string]any{"title": "Elsewhere"})
	apitest.RequireProblem(t, h.Do("POST", f.Path("/incidents"), map[string]any{"issueId": foreign["id"], "severity": "P1"}, f.Member.Access),
		404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))

	// The listed users get one INCIDENT notification each (job inserted with the
	// incident); the caller, listed too, gets none when the job runs.
	r := h.Do("POST", f.Path("/incidents"), map[string]any{"issueId": id, "severity": "P1", "onCallAssigneeId": f.Member.ID,
		"notifyUserIds": []string{f.Owner.ID.String(), f.Viewer.ID.String(), f.Member.ID.String()}}, f.Member.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	inc := r.JSON(t)
	require.Equal(t, id, inc["issueId"])
	require.Equal(t, iss["key"], inc["issueKey"])
	require.Equal(t, "P1", inc["severity"])
	require.Equal(t, f.Member.ID.String(), inc["onCallAssigneeId"])
	require.Nil(t, inc["postmortemBody"])
	require.Nil(t, inc["resolvedAt"])
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job AS j, incidents AS i WHERE i.id = $1 AND j.kind = 'notify.event'
		AND j.args->>'event' = 'direct' AND j.args->>'type' = 'INCIDENT' AND j.xmin = i.xmin
		AND jsonb_array_length(j.args->'recipients') = 3`, inc["id"]))
	quiet := h.Do("POST", f.Path("/incidents"), map[string]any{"issueId": id, "severity": "P3", "onCallAssigneeId": nil}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, quiet.Status, "%s", quiet.Body)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND args->>'type' = 'INCIDENT' AND args->>'issueId' = $1", id))

	list := h.Do("GET", f.Path("/incidents"), nil, f.Viewer.Access).Array(t)
	require.Len(t, list, 2)
	require.Equal(t, quiet.JSON(t)["id"], list[0].(map[string]any)["id"])
	require.Len(t, h.Do("GET", other.Path("/incidents"), nil, other.Owner.Access).Array(t), 0)

	incPath := f.Path("/incidents/" + inc["id"].(string))
	apitest.RequireProblem(t, h.Do("PATCH", other.Path("/incidents/"+inc["id"].(string)), map[string]any{"postmortemBody": nil}, other.Owner.Access),
		404, "NOT_FOUND", apitest.Reason("INCIDENT_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("PATCH", incPath, map[string]any{"postmortemBody": nil}, f.Viewer.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("PATCH", incPath, map[string]any{"postmortemBody": "  "}, f.Member.Access), 400, "VALIDATION_ERROR", apitest.NoReason)

	// With a postmortem: stored, and a system comment on the issue says so.
	require.Equal(t, http.StatusNoContent, h.Do("PATCH", incPath, map[string]any{"postmortemBody": "Cache stampede; added jitter."}, f.Member.Access).Status)
	comments := h.Do("GET", f.Path("/issues/"+iss["key"].(string)+"/comments"), nil, f.Owner.Access).JSON(t)["content"].([]any)
	require.Len(t, comments, 1)
	c := comments[0].(map[string]any)
	require.Nil(t, c["authorId"])
	require.Contains(t, c["body"], "Postmortem")
	require.Contains(t, c["body"], "Cache stampede; added jitter.")
	apitest.RequireProblem(t, h.Do("PATCH", incPath, map[string]any{"postmortemBody": "again"}, f.Member.Access), 409, "CONFLICT", apitest.Reason("INCIDENT_RESOLVED"))

	// Without one: resolved, no comment.
	quietPath := f.Path("/incidents/" + quiet.JSON(t)["id"].(string))
	require.Equal(t, http.StatusNoContent, h.Do("PATCH", quietPath, nil, f.Member.Access).Status)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM comments WHERE issue_id = $1", id))
	byID := map[string]map[string]any{}
	for _, it := range h.Do("GET", f.Path("/incidents"), nil, f.Owner.Access).Array(t) {
		byID[it.(map[string]any)["id"].(string)] = it.(map[string]any)
	}
	require.Equal(t, "Cache stampede; added jitter.", byID[inc["id"].(string)]["postmortemBody"])
	require.NotNil(t, byID[inc["id"].(string)]["resolvedAt"])
	require.Nil(t, byID[quiet.JSON(t)["id"].(string)]["postmortemBody"])
	require.NotNil(t, byID[quiet.JSON(t)["id"].(string)]["resolvedAt"])
}

// TestSLAMonitorOnTwoWorkers runs the breach monitor as it runs in production: a River
// periodic job on two worker processes (clients) sharing one database, every 100 ms.
// Only the elected leader enqueues it, and the report table's unique key makes even a
// change of leader harmless: however many scans run, each breach and escalation is
// notified and audited once.
func TestSLAMonitorOnTwoWorkers(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := deskFixtureOn(t, h)
	apitest.SetAuditLevel(t, h, "WRITE", true)
	pol := f.policy(t, "HIGH", 15, 60)
	r := h.Do("POST", f.Path("/service-desk/sla-policies/"+pol["id"].(string)+"/escalation-rules"),
		map[string]any{"escalateAfterMinutes": 30, "assigneeId": f.Member.ID, "notifyUserIds": []string{f.Viewer.ID.String()}}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	iss := f.Create(t, map[string]any{"title": "Down", "priority": "HIGH"})
	f.Patch(t, iss["id"].(string), map[string]any{"statusId": f.Prog})
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE issues SET sla_start_time = now() - interval '2 hours' WHERE id = $1", iss["id"])
	require.NoError(t, err)

	for range 2 {
		h.StartWorkersWith(func(c *workers.Config) { c.ServiceDesk.SLAInterval = 100 * time.Millisecond })
	}
	notifications := func(user uuid.UUID, typ string) int {
		return h.Count("SELECT count(*) FROM notifications WHERE user_id = $1 AND type = $2 AND issue_key = $3", user, typ, iss["key"])
	}
	apitest.Eventually(t, 20*time.Second, func() bool {
		return notifications(f.Viewer.ID, "SLA_BREACHED") == 1 && notifications(f.Viewer.ID, "SLA_ESCALATED") == 1 &&
			notifications(f.Member.ID, "ISSUE_ASSIGNED") == 1 &&
			h.Count("SELECT count(*) FROM audit_events WHERE action = 'SLA_BREACHED' AND user_email = 'system'") == 1
	}, "breach and escalation notified and audited")
	// Many more scans run…
	scans := h.Count("SELECT count(*) FROM river_job WHERE kind = 'servicedesk.sla_scan' AND state = 'completed'")
	apitest.Eventually(t, 20*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM river_job WHERE kind = 'servicedesk.sla_scan' AND state = 'completed'") >= scans+10
	}, "ten more scans")
	// …and nothing is reported twice.
	require.Equal(t, 1, notifications(f.Viewer.ID, "SLA_BREACHED"))
	require.Equal(t, 1, notifications(f.Viewer.ID, "SLA_ESCALATED"))
	require.Equal(t, 1, notifications(f.Member.ID, "ISSUE_ASSIGNED"))
	require.Equal(t, 2, h.Count("SELECT count(*) FROM sla_reports WHERE issue_id = $1", iss["id"]))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM audit_events WHERE action = 'SLA_BREACHED' AND resource_id = $1", iss["id"]))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM audit_events WHERE action = 'SLA_ESCALATED' AND resource_id = $1", iss["id"]))
	require.Equal(t, f.Member.ID.String(), f.Get(t, iss["key"].(string))["assigneeId"])
	body := h.Do("GET", "/api/v1/notifications", nil, f.Viewer.Access).JSON(t)["content"].([]any)
	require.NotEmpty(t, body)
	found := false
	for _, n := range body {
		m := n.(map[string]any)
		if m["type"] == "SLA_BREACHED" {
			found = true
			require.Equal(t, "SLA breached on "+iss["key"].(string), m["title"])
			require.Contains(t, m["body"], "60 minutes")
			require.Equal(t, "/p/"+f.Key+"/issues/"+iss["key"].(string), m["link"])
		}
	}
	require.True(t, found)
}

// TestIncidentNotifiesListedUsers: each listed user gets one INCIDENT notification in
// their language naming the issue key and severity; the caller is never notified.
func TestIncidentNotifiesListedUsers(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	require.Equal(t, http.StatusOK, h.Do("PATCH", "/api/v1/me/language", map[string]any{"language": "de"}, f.Viewer.Access).Status)
	iss := f.Create(t, map[string]any{"title": "Checkout down"})
	r := h.Do("POST", f.Path("/incidents"), map[string]any{"issueId": iss["id"], "severity": "P2",
		"notifyUserIds": []string{f.Owner.ID.String(), f.Viewer.ID.String(), f.Member.ID.String()}}, f.Member.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	h.StartWorkers()
	apitest.Eventually(t, 20*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM notifications WHERE type = 'INCIDENT'") == 2
	}, "two INCIDENT notifications")
	var title string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		"SELECT title FROM notifications WHERE type = 'INCIDENT' AND user_id = $1", f.Viewer.ID).Scan(&title))
	require.Equal(t, "Vorfall P2 bei "+iss["key"].(string), title)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM notifications WHERE type = 'INCIDENT' AND user_id = $1", f.Owner.ID))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM notifications WHERE type = 'INCIDENT' AND user_id = $1", f.Member.ID))
}
