package servicedesk_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func officeCalendar() map[string]any {
	return map[string]any{"name": "Berlin office", "timezone": "Europe/Berlin",
		"workingDays":  []string{"FRI", "MON", "TUE", "WED", "THU", "MON"},
		"workingHours": map[string]any{"start": "09:00", "end": "17:00"}, "holidaysCountry": "DE",
		"holidays": []string{"2026-12-31", "2026-12-24", "2026-12-31"}}
}

// TestSLACalendars: the calendars' round trip, validation, roles, another project's
// calendar, a policy counting in one and the refusal to delete it while it does.
func TestSLACalendars(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)
	cals := f.Path("/service-desk/calendars")
	apitest.RequireProblem(t, h.Do("POST", cals, officeCalendar(), f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("SERVICE_DESK_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("GET", cals, nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("SERVICE_DESK_NOT_FOUND"))
	require.Equal(t, http.StatusOK, h.Do("POST", f.Path("/service-desk/enable"), nil, f.Owner.Access).Status)
	admin := h.Register("Ada")
	f.AddMember(t, admin, "ADMIN")

	// Roles: project ADMINs write, every member reads, outsiders see nothing.
	apitest.RequireProblem(t, h.Do("POST", cals, officeCalendar(), f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("POST", cals, officeCalendar(), f.Viewer.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("POST", cals, officeCalendar(), f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	apitest.RequireProblem(t, h.Do("GET", cals, nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sla_calendars AS c JOIN service_desks AS d ON d.id = c.service_desk_id WHERE d.project_id = $1", f.ProjectID))

	// A strict request names a member the calendar does not read (a misspelt one).
	typo := officeCalendar()
	typo["holidayCountry"] = "DE"
	strict := h.Do("POST", cals, typo, f.Owner.Access, "Prefer", "handling=strict")
	apitest.RequireProblem(t, strict, 400, "BAD_REQUEST", apitest.Reason("UNKNOWN_MEMBER"))
	require.Contains(t, string(strict.Body), "holidayCountry")

	// Validation: nothing is written.
	for _, tc := range []struct {
		change       map[string]any
		code, reason string
	}{
		{map[string]any{"workingDays": []string{"MON", "FUNDAY"}}, "BAD_REQUEST", "INVALID_ENUM"},
		{map[string]any{"holidaysCountry": "XX"}, "BAD_REQUEST", "INVALID_ENUM"},
		{map[string]any{"holidaysCountry": "de"}, "BAD_REQUEST", "INVALID_ENUM"},
		{map[string]any{"name": nil}, "BAD_REQUEST", "MISSING_FIELD"},
		{map[string]any{"timezone": nil}, "BAD_REQUEST", "MISSING_FIELD"},
		{map[string]any{"workingDays": nil}, "BAD_REQUEST", "MISSING_FIELD"},
		{map[string]any{"workingHours": nil}, "BAD_REQUEST", "MISSING_FIELD"},
		{map[string]any{"workingHours": map[string]any{"start": "09:00"}}, "BAD_REQUEST", "MISSING_FIELD"},
		{map[string]any{"workingDays": "MON"}, "BAD_REQUEST", "WRONG_TYPE"},
		{map[string]any{"timezone": "Mars/Olympus_Mons"}, "VALIDATION_ERROR", ""},
		{map[string]any{"timezone": "Local"}, "VALIDATION_ERROR", ""},
		{map[string]any{"timezone": ""}, "VALIDATION_ERROR", ""},
		{map[string]any{"workingHours": map[string]any{"start": "17:00", "end": "09:00"}}, "VALIDATION_ERROR", ""},
		{map[string]any{"workingHours": map[string]any{"start": "09:00", "end": "09:00"}}, "VALIDATION_ERROR", ""},
		{map[string]any{"workingHours": map[string]any{"start": "9:00", "end": "17:00"}}, "VALIDATION_ERROR", ""},
		{map[string]any{"workingHours": map[string]any{"start": "09:00", "end": "24:01"}}, "VALIDATION_ERROR", ""},
		{map[string]any{"workingHours": map[string]any{"start": "24:00", "end": "24:00"}}, "VALIDATION_ERROR", ""},
		{map[string]any{"workingDays": []string{}}, "VALIDATION_ERROR", ""},
		{map[string]any{"holidays": []string{"2026-02-30"}}, "VALIDATION_ERROR", ""},
		{map[string]any{"holidays": []string{"24.12.2026"}}, "VALIDATION_ERROR", ""},
		{map[string]any{"holidays": make([]string, 367)}, "VALIDATION_ERROR", ""},
		{map[string]any{"name": " "}, "VALIDATION_ERROR", ""},
		{map[string]any{"name": strings.Repeat("n", 101)}, "VALIDATION_ERROR", ""},
	} {
		b := officeCalendar()
		for k, v := range tc.change {
			b[k] = v
		}
		p := apitest.RequireProblem(t, h.Do("POST", cals, b, f.Owner.Access), 400, tc.code, apitest.ReasonOrNone(tc.reason))
		if _, ok := tc.change["workingDays"]; ok && tc.reason == "INVALID_ENUM" {
			require.Equal(t, "workingDays must be one of MON, TUE, WED, THU, FRI, SAT, SUN.", p["message"])
		}
		if _, ok := tc.change["holidaysCountry"]; ok {
			require.Contains(t, p["message"], "holidaysCountry must be one of AR, AT,")
			require.Contains(t, p["message"], " DE, ")
		}
	}
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sla_calendars AS c JOIN service_desks AS d ON d.id = c.service_desk_id WHERE d.project_id = $1", f.ProjectID))

	r := h.Do("POST", cals, officeCalendar(), admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	cal := r.JSON(t)
	id := cal["id"].(string)
	require.Equal(t, "Berlin office", cal["name"])
	require.Equal(t, "Europe/Berlin", cal["timezone"])
	require.Equal(t, []any{"MON", "TUE", "WED", "THU", "FRI"}, cal["workingDays"])
	require.Equal(t, map[string]any{"start": "09:00", "end": "17:00"}, cal["workingHours"])
	require.Equal(t, "DE", cal["holidaysCountry"])
	require.Equal(t, []any{"2026-12-24", "2026-12-31"}, cal["holidays"])
	require.NotEmpty(t, cal["serviceDeskId"])
	list := h.Do("GET", cals, nil, f.Viewer.Access).Array(t)
	require.Len(t, list, 1)
	require.Equal(t, id, list[0].(map[string]any)["id"])

	// PUT replaces the whole calendar: no country, a night shift to midnight.
	night := map[string]any{"name": "Nights", "timezone": "America/New_York", "workingDays": []string{"SAT", "SUN"},
		"workingHours": map[string]any{"start": "22:00", "end": "24:00"}, "holidaysCountry": nil}
	apitest.RequireProblem(t, h.Do("PUT", f.Path("/service-desk/calendars/"+id), night, f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("PUT", f.Path("/service-desk/calendars/"+id), map[string]any{"name": "x"}, f.Owner.Access),
		400, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))
	r = h.Do("PUT", f.Path("/service-desk/calendars/"+id), night, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	upd := r.JSON(t)
	require.Equal(t, "Nights", upd["name"])
	require.Equal(t, []any{"SAT", "SUN"}, upd["workingDays"])
	require.Equal(t, map[string]any{"start": "22:00", "end": "24:00"}, upd["workingHours"])
	require.Nil(t, upd["holidaysCountry"])
	require.Equal(t, []any{}, upd["holidays"])

	// Another project's desk cannot reach it.
	other := deskFixtureOn(t, h)
	apitest.RequireProblem(t, h.Do("PUT", other.Path("/service-desk/calendars/"+id), night, other.Owner.Access),
		404, "NOT_FOUND", apitest.Reason("SLA_CALENDAR_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("DELETE", other.Path("/service-desk/calendars/"+id), nil, other.Owner.Access),
		404, "NOT_FOUND", apitest.Reason("SLA_CALENDAR_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("POST", other.Path("/service-desk/sla-policies"), map[string]any{"name": "P", "priority": "HIGH",
		"responseMinutes": 60, "resolutionMinutes": 240, "calendarId": id}, other.Owner.Access), 404, "NOT_FOUND", apitest.Reason("SLA_CALENDAR_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("DELETE", f.Path("/service-desk/calendars/x"), nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))

	// A policy with the calendar and a pause status; statuses of another workflow are refused.
	policy := map[string]any{"name": "Office hours", "priority": "HIGH", "responseMinutes": 60, "resolutionMinutes": 240,
		"calendarId": id, "pauseStatusIds": []string{f.Todo.String(), f.Todo.String()}}
	bad := map[string]any{}
	for k, v := range policy {
		bad[k] = v
	}
	bad["pauseStatusIds"] = []string{uuid.NewString()}
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/sla-policies"), bad, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("STATUS_NOT_FOUND"))
	bad["pauseStatusIds"] = []string{"nope"}
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/sla-policies"), bad, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	bad["pauseStatusIds"], bad["calendarId"] = []string{}, uuid.NewString()
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/sla-policies"), bad, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("SLA_CALENDAR_NOT_FOUND"))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sla_policies AS sp JOIN service_desks AS d ON d.id = sp.service_desk_id WHERE d.project_id = $1", f.ProjectID))
	r = h.Do("POST", f.Path("/service-desk/sla-policies"), policy, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	pol := r.JSON(t)
	require.Equal(t, id, pol["calendarId"])
	require.Equal(t, []any{f.Todo.String()}, pol["pauseStatusIds"])
	plain := (&deskFixture{Project: f}).policy(t, "LOW", 60, 240)
	require.Nil(t, plain["calendarId"])
	require.Equal(t, []any{}, plain["pauseStatusIds"])
	listed := h.Do("GET", f.Path("/service-desk/sla-policies"), nil, f.Member.Access).Array(t)
	require.Equal(t, id, listed[0].(map[string]any)["calendarId"])

	// In use: 409, and the calendar stays; once the policy is gone it can be deleted.
	apitest.RequireProblem(t, h.Do("DELETE", f.Path("/service-desk/calendars/"+id), nil, f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("DELETE", f.Path("/service-desk/calendars/"+id), nil, f.Owner.Access), 409, "CONFLICT", apitest.Reason("SLA_CALENDAR_IN_USE"))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM sla_calendars WHERE id = $1", id))
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", f.Path("/service-desk/sla-policies/"+pol["id"].(string)), nil, f.Owner.Access).Status)
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", f.Path("/service-desk/calendars/"+id), nil, admin.Access).Status)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM sla_calendars WHERE id = $1", id))
	apitest.RequireProblem(t, h.Do("DELETE", f.Path("/service-desk/calendars/"+id), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("SLA_CALENDAR_NOT_FOUND"))
}

// TestSLACalendarLimit: a desk has at most 50 calendars.
func TestSLACalendarLimit(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := deskFixtureOn(t, h)
	_, err := h.DB.Pool.Exec(t.Context(), `INSERT INTO sla_calendars (service_desk_id, name, timezone, working_days, work_start, work_end)
		SELECT $1, 'C' || g, 'UTC', '{1}', 0, 60 FROM generate_series(1, 49) AS g`, f.deskID)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, h.Do("POST", f.Path("/service-desk/calendars"), officeCalendar(), f.Owner.Access).Status)
	apitest.RequireProblem(t, h.Do("POST", f.Path("/service-desk/calendars"), officeCalendar(), f.Owner.Access), 409, "CONFLICT", apitest.Reason("SLA_CALENDAR_LIMIT"))
	require.Equal(t, 50, h.Count("SELECT count(*) FROM sla_calendars WHERE service_desk_id = $1", f.deskID))
}

// TestSLACalendarRoles: roles × calendar endpoints. Project ADMINs (the owner, an ADMIN
// member) write; MEMBER and VIEWER read; outsiders get nothing.
func TestSLACalendarRoles(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := deskFixtureOn(t, h)
	admin := h.Register("Ada")
	f.AddMember(t, admin, "ADMIN")
	seed := func() string {
		r := h.Do("POST", f.Path("/service-desk/calendars"), officeCalendar(), f.Owner.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return r.JSON(t)["id"].(string)
	}
	users := map[string]apitest.User{"owner": f.Owner, "admin": admin, "member": f.Member, "viewer": f.Viewer, "outsider": f.Outsider}
	for _, tc := range []struct {
		method string
		byID   bool
		body   map[string]any
		allow  map[string]int // role → status; absent = 403
	}{
		{"GET", false, nil, map[string]int{"owner": 200, "admin": 200, "member": 200, "viewer": 200}},
		{"POST", false, officeCalendar(), map[string]int{"owner": 200, "admin": 200}},
		{"PUT", true, officeCalendar(), map[string]int{"owner": 200, "admin": 200}},
		{"DELETE", true, nil, map[string]int{"owner": 204, "admin": 204}},
	} {
		for role, u := range users {
			path := f.Path("/service-desk/calendars")
			var id string
			if tc.byID {
				id = seed()
				path += "/" + id
			}
			before := h.Count("SELECT count(*) FROM sla_calendars WHERE service_desk_id = $1", f.deskID)
			r := h.Do(tc.method, path, tc.body, u.Access)
			want, ok := tc.allow[role]
			if !ok {
				apitest.RequireProblem(t, r, 403, "FORBIDDEN", apitest.AnyReason)
				require.Equal(t, before, h.Count("SELECT count(*) FROM sla_calendars WHERE service_desk_id = $1", f.deskID), "%s %s", tc.method, role)
				continue
			}
			require.Equal(t, want, r.Status, "%s %s: %s", tc.method, role, r.Body)
		}
	}
}
