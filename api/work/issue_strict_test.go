package work_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestIssueStrictBodies: with Prefer: handling=strict an unknown member of a PATCH is
// 400 UNKNOWN_MEMBER naming it and a member only replies carry 400 READ_ONLY_MEMBER,
// and nothing changes; the same body without the preference is 200 and changes nothing
// (lenient stays the default). Preference-Applied answers only a request that asked.
func TestIssueStrictBodies(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	iss := f.Create(t, map[string]any{"title": "Strict"})
	path := "/api/v1/projects/" + f.Key + "/issues/" + iss["key"].(string)
	strict := []string{"Prefer", "handling=strict"}

	r := h.Do("PATCH", path, map[string]any{"status": "Done"}, f.Member.Access, strict...)
	m := apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("UNKNOWN_MEMBER"))
	require.Equal(t, "status", m["details"].(map[string]any)["field"])
	require.Contains(t, m["message"], "status")
	require.Equal(t, "handling=strict", r.Header.Get("Preference-Applied"), "the error says strict was applied")

	for member, value := range map[string]any{"key": "X-1", "updatedAt": "2030-01-01T00:00:00Z", "customFields": []any{}, "statusName": "Done"} {
		r = h.Do("PATCH", path, map[string]any{"title": "Changed", member: value}, f.Member.Access, strict...)
		m = apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("READ_ONLY_MEMBER"))
		require.Equal(t, member, m["details"].(map[string]any)["field"])
	}
	// Nested objects are checked by their type: a member of a custom field value.
	r = h.Do("PATCH", path, map[string]any{"customFieldValues": []any{map[string]any{"fieldId": f.ProjectID, "value": 1, "colour": "red"}}},
		f.Member.Access, strict...)
	m = apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("UNKNOWN_MEMBER"))
	require.Equal(t, "customFieldValues[0].colour", m["details"].(map[string]any)["field"])
	// A create is checked as well; a strict body that is right is applied.
	r = h.Do("POST", "/api/v1/projects/"+f.Key+"/issues", map[string]any{"title": "x", "id": "00000000-0000-0000-0000-000000000001"},
		f.Member.Access, strict...)
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("READ_ONLY_MEMBER"))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM issues WHERE project_id = $1", f.ProjectID), "the refused create made nothing")

	got := h.Do("GET", path, nil, f.Member.Access)
	require.Equal(t, http.StatusOK, got.Status)
	require.Empty(t, got.Header.Get("Preference-Applied"), "not asked, not applied")
	require.Equal(t, iss["title"], got.JSON(t)["title"], "refused strict bodies changed nothing")
	require.Equal(t, iss["statusId"], got.JSON(t)["statusId"])

	// Lenient, the default: the unknown member is ignored.
	r = h.Do("PATCH", path, map[string]any{"status": "Done"}, f.Member.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Empty(t, r.Header.Get("Preference-Applied"))
	require.Equal(t, iss["statusId"], r.JSON(t)["statusId"], "unchanged")
	r = h.Do("PATCH", path, map[string]any{"status": "Done"}, f.Member.Access, "Prefer", "handling=lenient")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Empty(t, r.Header.Get("Preference-Applied"), "lenient asked: no strict applied")

	// Strict and right: applied, and said so.
	r = h.Do("PATCH", path, map[string]any{"title": "Strictly changed", "statusId": f.Done.String()}, f.Member.Access,
		"Prefer", `respond-async, handling="strict"; x=1`)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "handling=strict", r.Header.Get("Preference-Applied"))
	require.Equal(t, "Strictly changed", r.JSON(t)["title"])
}
