package work_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/webhook"
)

// cfFixture is an issue fixture with one field of every type.
type cfFixture struct {
	*apitest.Project
	text, number, date, dropdown, checkbox string
	high, low                              string // options of dropdown
}

func cfFixtureOn(t *testing.T, h *apitest.Harness) *cfFixture {
	t.Helper()
	f := &cfFixture{Project: apitest.NewProject(t, h)}
	f.text = customField(f.Project, t, map[string]any{"name": "Notes", "type": "TEXT", "sortOrder": 1})["id"].(string)
	f.number = customField(f.Project, t, map[string]any{"name": "Estimate", "type": "NUMBER", "sortOrder": 2})["id"].(string)
	f.date = customField(f.Project, t, map[string]any{"name": "Review", "type": "DATE", "sortOrder": 3})["id"].(string)
	f.dropdown = customField(f.Project, t, map[string]any{"name": "Severity", "type": "DROPDOWN", "sortOrder": 4})["id"].(string)
	f.checkbox = customField(f.Project, t, map[string]any{"name": "Blocked", "type": "CHECKBOX", "sortOrder": 5})["id"].(string)
	f.high = customOption(f.Project, t, f.dropdown, "High", 1)
	f.low = customOption(f.Project, t, f.dropdown, "Low", 2)
	return f
}

// cfValues reads an issue reply's customFields as fieldName → the one value member set
// (as JSON text), "" when unset; it checks each entry's shape on the way.
func cfValues(t *testing.T, iss map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, x := range iss["customFields"].([]any) {
		m := x.(map[string]any)
		require.ElementsMatch(t, []string{"fieldId", "fieldName", "type", "required", "textValue", "numberValue", "dateValue",
			"booleanValue", "optionId", "optionLabel"}, keys(m))
		set := ""
		for _, k := range []string{"textValue", "numberValue", "dateValue", "booleanValue", "optionLabel"} {
			if m[k] != nil {
				require.Empty(t, set, "one value member per field: %v", m)
				b, err := json.Marshal(m[k])
				require.NoError(t, err)
				set = string(b)
			}
		}
		require.Equal(t, m["optionId"] == nil, m["optionLabel"] == nil)
		out[m["fieldName"].(string)] = set
	}
	return out
}

func cfv(id string, v any) map[string]any { return map[string]any{"fieldId": id, "value": v} }

func TestCustomFieldValuesByType(t *testing.T) {
	t.Parallel()
	f := cfFixtureOn(t, apitest.Shared(t))

	// Create with a value of every type: the reply, the GET and the list show one entry
	// per field in the fields' order.
	iss := f.Create(t, map[string]any{"title": "Typed", "customFieldValues": []any{
		cfv(f.text, "Needs a look"), cfv(f.number, "+007.50"), cfv(f.date, "2026-12-01"), cfv(f.dropdown, f.high),
		cfv(f.checkbox, "true")}})
	want := map[string]string{"Notes": `"Needs a look"`, "Estimate": "7.5", "Review": `"2026-12-01"`, "Severity": `"High"`, "Blocked": "true"}
	require.Equal(t, want, cfValues(t, iss))
	got := f.Get(t, iss["key"].(string))
	require.Equal(t, want, cfValues(t, got))
	var names []string
	for _, x := range got["customFields"].([]any) {
		names = append(names, x.(map[string]any)["fieldName"].(string))
	}
	require.Equal(t, []string{"Notes", "Estimate", "Review", "Severity", "Blocked"}, names)
	sev := got["customFields"].([]any)[3].(map[string]any)
	require.Equal(t, []any{f.high, "High", "DROPDOWN", false}, []any{sev["optionId"], sev["optionLabel"], sev["type"], sev["required"]})
	require.Contains(t, string(f.H.Do("GET", f.Path("/issues/"+iss["key"].(string)), nil, f.Owner.Access).Body), `"numberValue":7.5,`,
		"numberValue is a JSON number")

	// An issue without values shows every field with nulls.
	bare := f.Create(t, map[string]any{"title": "Bare"})
	require.Equal(t, map[string]string{"Notes": "", "Estimate": "", "Review": "", "Severity": "", "Blocked": ""}, cfValues(t, bare))

	// Valid values of every type, through PATCH; JSON numbers and booleans are read as text.
	id := bare["id"].(string)
	for _, tc := range []struct {
		field string
		value any
		want  string
	}{
		{f.text, "  spaced  ", `"  spaced  "`}, {f.text, strings.Repeat("é", 10000), `"` + strings.Repeat("é", 10000) + `"`},
		{f.number, "-0", "0"}, {f.number, ".5", "0.5"}, {f.number, "12", "12"}, {f.number, 3.25, "3.25"},
		{f.number, "-1234567890.0100", "-1234567890.01"},
		{f.date, "0001-01-01", `"0001-01-01"`}, {f.date, "2026-02-28", `"2026-02-28"`},
		{f.dropdown, f.low, `"Low"`}, {f.dropdown, strings.ToUpper(f.high), `"High"`},
		{f.checkbox, "false", "false"}, {f.checkbox, true, "true"},
	} {
		r := f.Patch(t, id, map[string]any{"customFieldValues": []any{cfv(tc.field, tc.value)}})
		var name string
		for _, x := range r["customFields"].([]any) {
			if x.(map[string]any)["fieldId"] == strings.ToLower(tc.field) {
				name = x.(map[string]any)["fieldName"].(string)
			}
		}
		require.Equal(t, tc.want, cfValues(t, r)[name], "%v", tc.value)
	}

	// Invalid values: 400 CUSTOM_FIELD_INVALID naming the field, nothing changed, on
	// create and on patch.
	before := cfValues(t, f.Get(t, id))
	otherProject := apitest.NewProject(t, apitest.Shared(t))
	foreign := customField(otherProject, t, map[string]any{"name": "Theirs", "type": "TEXT"})["id"].(string)
	foreignOption := customOption(otherProject, t, customField(otherProject, t, map[string]any{"name": "Pick", "type": "DROPDOWN"})["id"].(string), "A", 0)
	for _, tc := range []struct {
		field, name string
		value       any
	}{
		{f.text, "Notes", strings.Repeat("x", 10001)},
		{f.number, "Estimate", "abc"}, {f.number, "Estimate", "1e5"}, {f.number, "Estimate", "NaN"}, {f.number, "Estimate", "1,5"},
		{f.number, "Estimate", ""}, {f.number, "Estimate", "1." + strings.Repeat("0", 40)}, {f.number, "Estimate", true},
		{f.date, "Review", "2026-13-01"}, {f.date, "Review", "01.12.2026"}, {f.date, "Review", "2026-02-30"}, {f.date, "Review", ""},
		{f.date, "Review", "0000-01-01"},
		{f.dropdown, "Severity", "High"}, {f.dropdown, "Severity", uuid.NewString()}, {f.dropdown, "Severity", foreignOption},
		{f.dropdown, "Severity", ""},
		{f.checkbox, "Blocked", "yes"}, {f.checkbox, "Blocked", "TRUE"}, {f.checkbox, "Blocked", "1"}, {f.checkbox, "Blocked", 1},
	} {
		for _, call := range []struct{ method, path string }{{"PATCH", f.Path("/issues/" + id)}, {"POST", f.Path("/issues")}} {
			body := map[string]any{"title": "Refused", "customFieldValues": []any{cfv(tc.field, tc.value)}}
			r := f.H.Do(call.method, call.path, body, f.Owner.Access)
			apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("CUSTOM_FIELD_INVALID"))
			if tc.name != "" {
				require.Contains(t, r.JSON(t)["message"], tc.name, "%s %v", call.method, tc.value)
			}
		}
	}
	require.Equal(t, before, cfValues(t, f.Get(t, id)))
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM issues WHERE project_id = $1 AND title = 'Refused'", f.ProjectID))
	r := f.H.Do("PATCH", f.Path("/issues/"+id), map[string]any{"customFieldValues": []any{cfv(f.text, "a"), cfv(f.text, "b")}}, f.Owner.Access)
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("CUSTOM_FIELD_INVALID"))
	require.Contains(t, r.JSON(t)["message"], f.text, "a field named twice")
	// Ids of no field of the project (another project's, a deleted one's) are dropped, as
	// label and version ids of another project are.
	kept := f.Patch(t, id, map[string]any{"customFieldValues": []any{cfv(foreign, "x"), cfv(uuid.NewString(), "y"), cfv(f.text, "kept")}})
	require.Equal(t, `"kept"`, cfValues(t, kept)["Notes"])
	require.Len(t, kept["customFields"], 5)
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM custom_field_values WHERE field_id = $1", foreign))
	for _, bad := range []struct {
		body   any
		reason string
	}{
		{map[string]any{"customFieldValues": []any{map[string]any{"value": "x"}}}, "MISSING_FIELD"},
		{map[string]any{"customFieldValues": []any{cfv("nope", "x")}}, "INVALID_UUID"},
		{map[string]any{"customFieldValues": []any{cfv(f.text, map[string]any{"a": 1})}}, "WRONG_TYPE"},
		{map[string]any{"customFieldValues": []any{cfv(f.text, []any{"a"})}}, "WRONG_TYPE"},
		{map[string]any{"customFieldValues": "x"}, "WRONG_TYPE"},
	} {
		apitest.RequireProblem(t, f.H.Do("PATCH", f.Path("/issues/"+id), bad.body, f.Owner.Access), 400, "BAD_REQUEST", apitest.ReasonOrNone(bad.reason))
	}
	// German readers get the field named in German.
	r = f.H.Do("PATCH", f.Path("/issues/"+id), map[string]any{"customFieldValues": []any{cfv(f.number, "x")}}, f.Owner.Access,
		"Accept-Language", "de")
	require.Equal(t, "Das benutzerdefinierte Feld Estimate nimmt eine Dezimalzahl wie 12 oder -3.5.", r.JSON(t)["message"])

	// null (or blank text) removes a value; an unchanged value is no change.
	r2 := f.Patch(t, id, map[string]any{"customFieldValues": []any{cfv(f.number, nil), cfv(f.text, "   "), cfv(f.checkbox, "true")}})
	v := cfValues(t, r2)
	require.Equal(t, []string{"", "", "true"}, []string{v["Estimate"], v["Notes"], v["Blocked"]})
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM custom_field_values WHERE issue_id = $1 AND field_id IN ($2, $3)", id, f.number, f.text))
	// Absent or null customFieldValues change nothing.
	require.Equal(t, v, cfValues(t, f.Patch(t, id, map[string]any{"title": "Renamed"})))
	require.Equal(t, v, cfValues(t, f.Patch(t, id, map[string]any{"customFieldValues": nil})))
}

func TestCustomFieldRequired(t *testing.T) {
	t.Parallel()
	f := cfFixtureOn(t, apitest.Shared(t))
	old := f.Create(t, map[string]any{"title": "Before the rule"})

	r := f.H.Do("PUT", f.Path("/custom-fields/"+f.dropdown), map[string]any{"required": true}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	customField(f.Project, t, map[string]any{"name": "Team", "type": "TEXT", "required": true, "sortOrder": 9})

	// Create: every required field needs a value; the first missing one (in the fields'
	// order) is named. Blank text is no value.
	r = f.H.Do("POST", f.Path("/issues"), map[string]any{"title": "x"}, f.Owner.Access)
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("CUSTOM_FIELD_REQUIRED"))
	require.Equal(t, "The custom field Severity is required.", r.JSON(t)["message"])
	teamID := ""
	for _, x := range f.H.Do("GET", f.Path("/custom-fields"), nil, f.Owner.Access).Array(t) {
		if x.(map[string]any)["name"] == "Team" {
			teamID = x.(map[string]any)["id"].(string)
		}
	}
	r = f.H.Do("POST", f.Path("/issues"), map[string]any{"title": "x", "customFieldValues": []any{cfv(f.dropdown, f.low), cfv(teamID, " ")}}, f.Owner.Access)
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("CUSTOM_FIELD_REQUIRED"))
	require.Contains(t, r.JSON(t)["message"], "Team")
	ok := f.Create(t, map[string]any{"title": "Complete", "customFieldValues": []any{cfv(f.dropdown, f.low), cfv(teamID, "Core")}})
	require.Equal(t, `"Low"`, cfValues(t, ok)["Severity"])
	var required int
	for _, x := range ok["customFields"].([]any) {
		if x.(map[string]any)["required"] == true {
			required++
		}
	}
	require.Equal(t, 2, required)

	// An issue from before the rule: readable, listable and changeable without the values...
	got := f.Get(t, old["key"].(string))
	require.Equal(t, "", cfValues(t, got)["Severity"])
	require.Contains(t, listKeys(f.Project, t, f.Owner.Access, ""), old["key"])
	f.Patch(t, old["id"].(string), map[string]any{"title": "Still fine", "customFieldValues": []any{cfv(f.number, "3")}})
	// ...but a change never clears a required field's value.
	r = f.H.Do("PATCH", f.Path("/issues/"+ok["id"].(string)), map[string]any{"customFieldValues": []any{cfv(f.dropdown, nil)}}, f.Owner.Access)
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("CUSTOM_FIELD_REQUIRED"))
	r = f.H.Do("PATCH", f.Path("/issues/"+ok["id"].(string)), map[string]any{"customFieldValues": []any{cfv(teamID, "")}}, f.Owner.Access)
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("CUSTOM_FIELD_REQUIRED"))
	require.Equal(t, `"Core"`, cfValues(t, f.Get(t, ok["key"].(string)))["Team"])
}

func TestCustomFieldValuesCascade(t *testing.T) {
	t.Parallel()
	f := cfFixtureOn(t, apitest.Shared(t))
	a := f.Create(t, map[string]any{"title": "A", "customFieldValues": []any{cfv(f.dropdown, f.high), cfv(f.text, "keep"), cfv(f.number, "1")}})
	b := f.Create(t, map[string]any{"title": "B", "customFieldValues": []any{cfv(f.dropdown, f.low), cfv(f.number, "2")}})
	count := func(field string) int {
		return f.H.Count("SELECT count(*) FROM custom_field_values WHERE field_id = $1", field)
	}
	require.Equal(t, 2, count(f.dropdown))

	// Deleting an option removes the values that chose it, and only those.
	require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.Path("/custom-fields/"+f.dropdown+"/options/"+f.high), nil, f.Owner.Access).Status)
	require.Equal(t, "", cfValues(t, f.Get(t, a["key"].(string)))["Severity"])
	require.Equal(t, `"Low"`, cfValues(t, f.Get(t, b["key"].(string)))["Severity"])

	// Deleting a field removes its values from every issue, and the field from replies.
	require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.Path("/custom-fields/"+f.number), nil, f.Owner.Access).Status)
	require.Equal(t, 0, count(f.number))
	got := cfValues(t, f.Get(t, a["key"].(string)))
	require.NotContains(t, got, "Estimate")
	require.Equal(t, `"keep"`, got["Notes"])

	// Deleting an issue removes its values.
	require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.Path("/issues/"+a["id"].(string)), nil, f.Owner.Access).Status)
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM custom_field_values WHERE issue_id = $1", a["id"]))
	require.Equal(t, 1, count(f.dropdown))
}

func TestCustomFieldChangeEvents(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := cfFixtureOn(t, h)
	apitest.SetAuditLevel(t, h, "WRITE", true)
	iss := f.Create(t, map[string]any{"title": "Evented", "customFieldValues": []any{cfv(f.dropdown, f.high)}})
	id := iss["id"].(string)
	require.Equal(t, []string{"ISSUE_CREATED"}, apitest.IssueAuditJobs(t, h, id), "values set at create are part of the creation")

	f.Patch(t, id, map[string]any{"customFieldValues": []any{cfv(f.dropdown, f.low), cfv(f.number, "4"), cfv(f.text, nil)}})
	require.Equal(t, []string{"CUSTOM_FIELD_CHANGED:∅→Estimate: 4", "CUSTOM_FIELD_CHANGED:Severity: High→Severity: Low"},
		f.Activity(t, id), "in the fields' order; the text was unset already: no change")
	require.Equal(t, []string{"ISSUE_CREATED", "ISSUE_UPDATED", "ISSUE_UPDATED"}, apitest.IssueAuditJobs(t, h, id))
	rows, err := h.DB.Pool.Query(context.Background(), `SELECT args->>'details' FROM river_job
		WHERE kind = 'audit.record' AND args->>'resourceId' = $1 AND args->>'action' = 'ISSUE_UPDATED' ORDER BY id`, id)
	require.NoError(t, err)
	var details []map[string]any
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		var d map[string]any
		require.NoError(t, json.Unmarshal([]byte(s), &d))
		details = append(details, d)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string]any{"issueKey": iss["key"], "field": "customField", "customFieldId": f.dropdown,
		"customFieldName": "Severity", "oldValue": "High", "newValue": "Low"}, details[1])
	require.Equal(t, []any{"Estimate", "", "4"}, []any{details[0]["customFieldName"], details[0]["oldValue"], details[0]["newValue"]})

	// The issue's updatedAt moves with a custom field change.
	got := f.Get(t, id)
	before, err := time.Parse(time.RFC3339Nano, iss["updatedAt"].(string))
	require.NoError(t, err)
	after, err := time.Parse(time.RFC3339Nano, got["updatedAt"].(string))
	require.NoError(t, err)
	require.True(t, after.After(before))

	// The webhook message is issue.updated naming the field.
	fid := uuid.MustParse(f.dropdown)
	m, ok := webhook.IssueMessage(issue.FieldChanged{Field: issue.FieldCustomField, NewValue: "Low", NewRaw: f.low,
		CustomFieldID: &fid, CustomFieldName: "Severity"})
	require.True(t, ok)
	require.Equal(t, webhook.EventIssueUpdated, m.Type)
	raw, err := json.Marshal(m.Data)
	require.NoError(t, err)
	require.JSONEq(t, `{"issueId":"00000000-0000-0000-0000-000000000000","issueKey":"","field":"customField","newValue":"Low",
		"customFieldId":"`+f.dropdown+`","customFieldName":"Severity"}`, string(raw))
}
