package account_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestUserSearch(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	// A tag no other test's users carry, so the shared database does not interfere.
	tag := strings.ToLower(apitest.UniqueProjectKey())
	searcher := h.Register("Searcher")
	key := apitest.PostProject(t, h, searcher.Access)
	h.SetSystemRole(searcher, "MEMBER")

	names := []string{"Zed" + tag, "anna" + tag, "Bob" + tag, "Inactive" + tag, "Deleted" + tag}
	ids := map[string]string{}
	for _, n := range names {
		ids[n] = h.Register(n).ID.String()
	}
	_, err := h.DB.Pool.Exec(t.Context(), "UPDATE users SET active = false WHERE id = $1", ids["Inactive"+tag])
	require.NoError(t, err)
	_, err = h.DB.Pool.Exec(t.Context(), "UPDATE users SET deleted_at = now() WHERE id = $1", ids["Deleted"+tag])
	require.NoError(t, err)

	get := func(token, q string) []any {
		t.Helper()
		r := h.Do("GET", "/api/v1/users/search?q="+url.QueryEscape(q), nil, token)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return r.Array(t)
	}

	hits := get(searcher.Access, strings.ToUpper(tag))
	var got []string
	for _, hit := range hits {
		m := hit.(map[string]any)
		require.Len(t, m, 3)
		require.Contains(t, m["email"], tag)
		got = append(got, m["displayName"].(string))
	}
	require.Equal(t, []string{"anna" + tag, "Bob" + tag, "Zed" + tag}, got, "case-insensitive, by display name, active and not deleted only")

	// The email matches too: only addresses carry the "-" after the name.
	emailHits := get(searcher.Access, "ZED"+tag+"-")
	require.Len(t, emailHits, 1)
	require.Equal(t, ids["Zed"+tag], emailHits[0].(map[string]any)["id"])

	require.Empty(t, get(searcher.Access, " z "), "trimmed q under 2 characters")
	require.Empty(t, get(searcher.Access, ""))
	require.Empty(t, get(searcher.Access, tag[:3]+"%"+tag[4:]), "% matches literally")
	require.Empty(t, get(searcher.Access, "_"+tag[1:]), "_ matches literally")
	require.Empty(t, get(searcher.Access, tag+"\x00"), "NUL matches nobody, without an error")

	for range 12 {
		h.Register("Many" + tag)
	}
	require.Len(t, get(searcher.Access, tag), 10, "at most 10")

	// Who may search: system ADMIN, project ADMIN/owner, organization OWNER/ADMIN.
	plain := h.Register("Plain")
	h.SetSystemRole(plain, "MEMBER")
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/users/search?q="+tag, nil, plain.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("USER_SEARCH_FORBIDDEN"))
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/users/search?q=a", nil, plain.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("USER_SEARCH_FORBIDDEN"))
	apitest.PostMember(t, h, searcher.Access, key, plain.ID, "MEMBER")
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/users/search?q="+tag, nil, plain.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("USER_SEARCH_FORBIDDEN"))
	require.Equal(t, http.StatusOK, h.Do("PATCH", "/api/v1/projects/"+key+"/members/"+plain.ID.String(), map[string]any{"role": "ADMIN"}, searcher.Access).Status)
	require.Len(t, get(plain.Access, tag), 10, "a project ADMIN may search")

	sys, orgAdmin, orgMember := h.Register("Sys"), h.Register("OrgAdmin"), h.Register("OrgMember")
	h.MakeAdmin(sys)
	h.SetSystemRole(orgAdmin, "MEMBER")
	h.SetSystemRole(orgMember, "MEMBER")
	require.Len(t, get(sys.Access, tag), 10, "a system ADMIN may search")
	org := apitest.PostOrganization(t, h, sys.Access)
	apitest.PostOrgMember(t, h, sys.Access, org, orgAdmin.ID, "ADMIN")
	apitest.PostOrgMember(t, h, sys.Access, org, orgMember.ID, "MEMBER")
	require.Len(t, get(orgAdmin.Access, tag), 10, "an organization ADMIN may search")
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/users/search?q="+tag, nil, orgMember.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("USER_SEARCH_FORBIDDEN"))
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/users/search?q="+tag, nil, "").Status)
}
