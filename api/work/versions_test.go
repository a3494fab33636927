package work_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestVersions(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	other := apitest.NewProject(t, apitest.Shared(t))
	foreign := other.Version(t, "1.0")

	require.Equal(t, []any{}, f.H.Do("GET", f.Path("/versions"), nil, f.Viewer.Access).Array(t))
	r := f.H.Do("POST", f.Path("/versions"), map[string]any{"name": "1.0"}, f.Member.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	v1 := r.JSON(t)
	require.Equal(t, []string{"id", "name"}, versionKeysSorted(v1))
	require.Equal(t, "1.0", v1["name"])
	id := v1["id"].(string)
	v2 := f.Version(t, "2.0")

	// The same name in another project is fine; twice in one project is 409.
	apitest.RequireProblem(t, f.H.Do("POST", f.Path("/versions"), map[string]any{"name": "2.0"}, f.Owner.Access), 409, "CONFLICT", apitest.Reason("DUPLICATE_NAME"))
	apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/versions/"+id), map[string]any{"name": "2.0"}, f.Owner.Access), 409, "CONFLICT", apitest.Reason("DUPLICATE_NAME"))

	r = f.H.Do("PUT", f.Path("/versions/"+id), map[string]any{"name": "1.1"}, f.Member.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, map[string]any{"id": id, "name": "1.1"}, r.JSON(t))
	require.Equal(t, []any{map[string]any{"id": id, "name": "1.1"}, map[string]any{"id": v2, "name": "2.0"}},
		f.H.Do("GET", f.Path("/versions"), nil, f.Viewer.Access).Array(t), "creation order")

	for _, bad := range []struct {
		body   any
		code   string
		reason string
	}{
		{map[string]any{}, "BAD_REQUEST", "MISSING_FIELD"},
		{map[string]any{"name": nil}, "BAD_REQUEST", "MISSING_FIELD"},
		{map[string]any{"name": 1}, "BAD_REQUEST", "WRONG_TYPE"},
		{`{"name"`, "BAD_REQUEST", "MALFORMED_JSON"},
		{map[string]any{"name": " "}, "VALIDATION_ERROR", ""},
		{map[string]any{"name": strings.Repeat("v", 51)}, "VALIDATION_ERROR", ""},
		{map[string]any{"name": "v\x00"}, "VALIDATION_ERROR", "NUL_CHARACTER"},
	} {
		apitest.RequireProblem(t, f.H.Do("POST", f.Path("/versions"), bad.body, f.Owner.Access), 400, bad.code, apitest.ReasonOrNone(bad.reason))
		apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/versions/"+id), bad.body, f.Owner.Access), 400, bad.code, apitest.ReasonOrNone(bad.reason))
	}
	require.Equal(t, http.StatusCreated, f.H.Do("POST", f.Path("/versions"), map[string]any{"name": strings.Repeat("v", 50)}, f.Owner.Access).Status)

	// Another project's version, an unknown one and a malformed id.
	apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/versions/"+foreign), map[string]any{"name": "x"}, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("VERSION_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/versions/"+foreign), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("VERSION_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/versions/"+uuid.NewString()), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("VERSION_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/versions/nope"), map[string]any{"name": "x"}, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	require.Equal(t, "1.0", other.H.Do("GET", other.Path("/versions"), nil, other.Owner.Access).Array(t)[0].(map[string]any)["name"])

	// Viewers and outsiders may not write.
	apitest.RequireProblem(t, f.H.Do("PUT", f.Path("/versions/"+id), map[string]any{"name": "x"}, f.Viewer.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, f.H.Do("DELETE", f.Path("/versions/"+id), nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))

	// Delete removes the assignments of the version, not the issues.
	iss := f.Create(t, map[string]any{"title": "Versioned"})
	f.Patch(t, iss["id"].(string), map[string]any{"fixVersionIds": []string{id}, "affectsVersionIds": []string{id, v2}})
	require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.Path("/versions/"+id), nil, f.Member.Access).Status)
	got := f.Get(t, iss["key"].(string))
	require.Equal(t, []any{}, got["fixVersions"])
	require.Equal(t, []any{map[string]any{"id": v2, "name": "2.0"}}, got["affectsVersions"])
	require.Len(t, f.H.Do("GET", f.Path("/versions"), nil, f.Owner.Access).Array(t), 2)
}

func versionKeysSorted(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
