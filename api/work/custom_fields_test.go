package work_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// customField creates a field through the API as the owner and returns the reply.
func customField(f *apitest.Project, t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := f.H.Do("POST", f.Path("/custom-fields"), body, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// customOption adds an option to a DROPDOWN field and returns its id.
func customOption(f *apitest.Project, t *testing.T, fieldID, label string, sort int) string {
	t.Helper()
	r := f.H.Do("POST", f.Path("/custom-fields/"+fieldID+"/options"), map[string]any{"label": label, "sortOrder": sort}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)["id"].(string)
}

// customFieldNames lists the project's fields as name:type:required:sortOrder, in reply order.
func customFieldNames(f *apitest.Project, t *testing.T, token string) []string {
	t.Helper()
	r := f.H.Do("GET", f.Path("/custom-fields"), nil, token)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	out := []string{}
	for _, x := range r.Array(t) {
		m := x.(map[string]any)
		require.ElementsMatch(t, []string{"id", "name", "type", "required", "sortOrder", "options"}, keys(m))
		out = append(out, m["name"].(string)+":"+m["type"].(string)+":"+boolWord(m["required"].(bool))+":"+
			formatNumber(m["sortOrder"]))
	}
	return out
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func boolWord(b bool) string {
	if b {
		return "required"
	}
	return "optional"
}

func formatNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestCustomFieldDefinitions(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	other := apitest.NewProject(t, apitest.Shared(t))

	// Web client: GET when the project opens. An empty project has [].
	require.Equal(t, []string{}, customFieldNames(f, t, f.Viewer.Access))

	sev := customField(f, t, map[string]any{"name": "  Severity ", "type": "DROPDOWN", "required": true, "sortOrder": 2})
	require.Equal(t, "Severity", sev["name"], "trimmed")
	require.Equal(t, []any{}, sev["options"])
	est := customField(f, t, map[string]any{"name": "Estimate", "type": "NUMBER"})
	require.Equal(t, false, est["required"])
	require.EqualValues(t, 0, est["sortOrder"])
	customField(f, t, map[string]any{"name": "Due review", "type": "DATE", "sortOrder": 1})
	customField(f, t, map[string]any{"name": "Notes", "type": "TEXT", "sortOrder": -1})
	customField(f, t, map[string]any{"name": "Blocked", "type": "CHECKBOX", "sortOrder": 2})
	require.Equal(t, []string{"Notes:TEXT:optional:-1", "Estimate:NUMBER:optional:0", "Due review:DATE:optional:1",
		"Severity:DROPDOWN:required:2", "Blocked:CHECKBOX:optional:2"}, customFieldNames(f, t, f.Member.Access),
		"by sortOrder, then creation")

	// Options: by sortOrder, then creation; labels unique whatever the case.
	sevID := sev["id"].(string)
	high := customOption(f, t, sevID, "High", 1)
	low := customOption(f, t, sevID, "Low", 3)
	customOption(f, t, sevID, "Medium", 2)
	r := f.H.Do("POST", f.Path("/custom-fields/"+sevID+"/options"), map[string]any{"label": "HIGH"}, f.Owner.Access)
	apitest.RequireProblem(t, r, 409, "CONFLICT", apitest.Reason("DUPLICATE_LABEL"))
	r = f.H.Do("PUT", f.Path("/custom-fields/"+sevID+"/options/"+low), map[string]any{"label": " Lowest ", "sortOrder": 0}, f.Member.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, map[string]any{"id": low, "label": "Lowest", "sortOrder": float64(0)}, r.JSON(t))
	r = f.H.Do("GET", f.Path("/custom-fields"), nil, f.Viewer.Access)
	var options []string
	for _, x := range r.Array(t) {
		m := x.(map[string]any)
		if m["id"] == sevID {
			for _, o := range m["options"].([]any) {
				options = append(options, o.(map[string]any)["label"].(string))
			}
		} else {
			require.Equal(t, []any{}, m["options"], "only DROPDOWN fields have options")
		}
	}
	require.Equal(t, []string{"Lowest", "High", "Medium"}, options)
	apitest.RequireProblem(t, f.H.Do("POST", f.Path("/custom-fields/"+est["id"].(string)+"/options"), map[string]any{"label": "x"}, f.Owner.Access),
		400, "BAD_REQUEST", apitest.Reason("CUSTOM_FIELD_NOT_DROPDOWN"))

	// PUT: the type never changes (it is ignored); absent members stay.
	r = f.H.Do("PUT", f.Path("/custom-fields/"+est["id"].(string)), map[string]any{"name": "Estimate (h)", "type": "TEXT", "required": true}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.Equal(t, []any{"Estimate (h)", "NUMBER", true, float64(0)}, []any{m["name"], m["type"], m["required"], m["sortOrder"]})
	r = f.H.Do("PUT", f.Path("/custom-fields/"+est["id"].(string)), map[string]any{"name": "severity"}, f.Owner.Access)
	apitest.RequireProblem(t, r, 409, "CONFLICT", apitest.Reason("DUPLICATE_NAME"))
	apitest.RequireProblem(t, f.H.Do("POST", f.Path("/custom-fields"), map[string]any{"name": "SEVERITY", "type": "TEXT"}, f.Owner.Access),
		409, "CONFLICT", apitest.Reason("DUPLICATE_NAME"))
	// Another project may use the name.
	customField(other, t, map[string]any{"name": "Severity", "type": "TEXT"})

	// Reorder: all or nothing, 204.
	ids := map[string]string{}
	for _, x := range f.H.Do("GET", f.Path("/custom-fields"), nil, f.Owner.Access).Array(t) {
		ids[x.(map[string]any)["name"].(string)] = x.(map[string]any)["id"].(string)
	}
	r = f.H.Do("PUT", f.Path("/custom-fields/reorder"), []map[string]any{{"id": ids["Blocked"], "sortOrder": -5},
		{"id": ids["Notes"], "sortOrder": 10}}, f.Member.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	want := []string{"Blocked:CHECKBOX:optional:-5", "Estimate (h):NUMBER:required:0", "Due review:DATE:optional:1",
		"Severity:DROPDOWN:required:2", "Notes:TEXT:optional:10"}
	require.Equal(t, want, customFieldNames(f, t, f.Owner.Access))
	otherField := customField(other, t, map[string]any{"name": "Theirs", "type": "TEXT"})["id"].(string)
	apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/custom-fields/reorder"), []map[string]any{{"id": ids["Notes"], "sortOrder": 99},
		{"id": otherField, "sortOrder": 1}}, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("CUSTOM_FIELD_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/custom-fields/reorder"), []map[string]any{{"id": ids["Notes"], "sortOrder": 99},
		{"id": ids["Notes"], "sortOrder": 1}}, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("DUPLICATE_FIELD"))
	require.Equal(t, want, customFieldNames(f, t, f.Owner.Access), "a refused reorder changes nothing")
	require.Equal(t, http.StatusNoContent, f.H.Do("PUT", f.Path("/custom-fields/reorder"), []any{}, f.Owner.Access).Status)
	apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/custom-fields/reorder"), map[string]any{"id": ids["Notes"]}, f.Owner.Access),
		400, "BAD_REQUEST", apitest.Reason("BODY_NOT_ARRAY"))
	apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/custom-fields/reorder"), []map[string]any{{"id": ids["Notes"]}}, f.Owner.Access),
		400, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))
	apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/custom-fields/reorder"), []map[string]any{{"id": "x", "sortOrder": 1}}, f.Owner.Access),
		400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))

	// Bad input is a clear 400, never a 5xx.
	for _, bad := range []struct {
		body         any
		code, reason string
	}{
		{map[string]any{"type": "TEXT"}, "BAD_REQUEST", "MISSING_FIELD"},
		{map[string]any{"name": "x"}, "BAD_REQUEST", "MISSING_FIELD"},
		{map[string]any{"name": "x", "type": "SELECT"}, "BAD_REQUEST", "INVALID_ENUM"},
		{map[string]any{"name": "x", "type": "TEXT", "required": "yes"}, "BAD_REQUEST", "WRONG_TYPE"},
		{map[string]any{"name": "x", "type": "TEXT", "sortOrder": 1.5}, "BAD_REQUEST", "WRONG_TYPE"},
		{`[1]`, "BAD_REQUEST", "MALFORMED_JSON"},
	} {
		apitest.RequireProblem(t, f.H.Do("POST", f.Path("/custom-fields"), bad.body, f.Owner.Access), 400, bad.code, apitest.ReasonOrNone(bad.reason))
	}
	for _, body := range []map[string]any{{"name": "  ", "type": "TEXT"}, {"name": strings.Repeat("n", 101), "type": "TEXT"},
		{"name": "x", "type": "TEXT", "sortOrder": 1 << 31}} {
		apitest.RequireProblem(t, f.H.Do("POST", f.Path("/custom-fields"), body, f.Owner.Access), 400, "VALIDATION_ERROR", apitest.NoReason)
	}
	apitest.RequireProblem(t, f.H.Do("POST", f.Path("/custom-fields/"+sevID+"/options"), map[string]any{}, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))

	// Roles: viewers read but never write; outsiders do neither.
	apitest.RequireProblem(t, f.H.Do("POST", f.Path("/custom-fields"), map[string]any{"name": "v", "type": "TEXT"}, f.Viewer.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/custom-fields"), nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/custom-fields/"+sevID), nil, f.Viewer.Access), 403, "FORBIDDEN", apitest.NoReason)

	// Fields and options of another project are not found.
	apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/custom-fields/"+otherField), map[string]any{"name": "mine"}, f.Owner.Access),
		404, "NOT_FOUND", apitest.Reason("CUSTOM_FIELD_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/custom-fields/"+otherField), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("CUSTOM_FIELD_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/custom-fields/"+ids["Notes"]+"/options/"+high), nil, f.Owner.Access),
		404, "NOT_FOUND", apitest.Reason("OPTION_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/custom-fields/"+ids["Notes"]+"/options/"+high), map[string]any{"label": "x"}, f.Owner.Access),
		404, "NOT_FOUND", apitest.Reason("OPTION_NOT_FOUND"))

	// Deletes: 204, then gone.
	r = f.H.Do("DELETE", f.Path("/custom-fields/"+sevID+"/options/"+high), nil, f.Owner.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/custom-fields/"+sevID+"/options/"+high), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("OPTION_NOT_FOUND"))
	require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.Path("/custom-fields/"+sevID), nil, f.Member.Access).Status)
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM custom_field_options WHERE field_id = $1", sevID), "options go with their field")
	apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/custom-fields/"+sevID), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("CUSTOM_FIELD_NOT_FOUND"))
	require.Len(t, customFieldNames(f, t, f.Owner.Access), 4)
}
