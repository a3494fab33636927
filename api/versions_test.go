package api_test

import (
	"github.com/taskweave/taskweave/api/apitest"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestVersions(t *testing.T) {
	t.Parallel()
	f := issueFixtureNew(t)
	other := issueFixtureNew(t)
	foreign := other.version(t, "1.0")

	require.Equal(t, []any{}, f.h.Do("GET", f.path("/versions"), nil, f.viewer.Access).Array(t))
	r := f.h.Do("POST", f.path("/versions"), map[string]any{"name": "1.0"}, f.member.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	v1 := r.JSON(t)
	require.Equal(t, []string{"id", "name"}, versionKeysSorted(v1))
	require.Equal(t, "1.0", v1["name"])
	id := v1["id"].(string)
	v2 := f.version(t, "2.0")

	// The same name in another project is fine; twice in one project is 409.
	apitest.RequireProblem(t, f.h.Do("POST", f.path("/versions"), map[string]any{"name": "2.0"}, f.owner.Access), 409, "CONFLICT", apitest.Reason("DUPLICATE_NAME"))
	apitest.RequireProblem(t, f.h.Do("PUT", f.path("/versions/"+id), map[string]any{"name": "2.0"}, f.owner.Access), 409, "CONFLICT", apitest.Reason("DUPLICATE_NAME"))

	r = f.h.Do("PUT", f.path("/versions/"+id), map[string]any{"name": "1.1"}, f.member.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, map[string]any{"id": id, "name": "1.1"}, r.JSON(t))
	require.Equal(t, []any{map[string]any{"id": id, "name": "1.1"}, map[string]any{"id": v2, "name": "2.0"}},
		f.h.Do("GET", f.path("/versions"), nil, f.viewer.Access).Array(t), "creation order")

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
		apitest.RequireProblem(t, f.h.Do("POST", f.path("/versions"), bad.body, f.owner.Access), 400, bad.code, apitest.ReasonOrNone(bad.reason))
		apitest.RequireProblem(t, f.h.Do("PUT", f.path("/versions/"+id), bad.body, f.owner.Access), 400, bad.code, apitest.ReasonOrNone(bad.reason))
	}
	require.Equal(t, http.StatusCreated, f.h.Do("POST", f.path("/versions"), map[string]any{"name": strings.Repeat("v", 50)}, f.owner.Access).Status)

	// Another project's version, an unknown one and a malformed id.
	apitest.RequireProblem(t, f.h.Do("PUT", f.path("/versions/"+foreign), map[string]any{"name": "x"}, f.owner.Access), 404, "NOT_FOUND", apitest.Reason("VERSION_NOT_FOUND"))
	apitest.RequireProblem(t, f.h.Do("DELETE", f.path("/versions/"+foreign), nil, f.owner.Access), 404, "NOT_FOUND", apitest.Reason("VERSION_NOT_FOUND"))
	apitest.RequireProblem(t, f.h.Do("DELETE", f.path("/versions/"+uuid.NewString()), nil, f.owner.Access), 404, "NOT_FOUND", apitest.Reason("VERSION_NOT_FOUND"))
	apitest.RequireProblem(t, f.h.Do("PUT", f.path("/versions/nope"), map[string]any{"name": "x"}, f.owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	require.Equal(t, "1.0", other.h.Do("GET", other.path("/versions"), nil, other.owner.Access).Array(t)[0].(map[string]any)["name"])

	// Viewers and outsiders may not write.
	apitest.RequireProblem(t, f.h.Do("PUT", f.path("/versions/"+id), map[string]any{"name": "x"}, f.viewer.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, f.h.Do("DELETE", f.path("/versions/"+id), nil, f.outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))

	// Delete removes the assignments of the version, not the issues.
	iss := f.create(t, map[string]any{"title": "Versioned"})
	f.patch(t, iss["id"].(string), map[string]any{"fixVersionIds": []string{id}, "affectsVersionIds": []string{id, v2}})
	require.Equal(t, http.StatusNoContent, f.h.Do("DELETE", f.path("/versions/"+id), nil, f.member.Access).Status)
	got := f.get(t, iss["key"].(string))
	require.Equal(t, []any{}, got["fixVersions"])
	require.Equal(t, []any{map[string]any{"id": v2, "name": "2.0"}}, got["affectsVersions"])
	require.Len(t, f.h.Do("GET", f.path("/versions"), nil, f.owner.Access).Array(t), 2)
}

func versionKeysSorted(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
