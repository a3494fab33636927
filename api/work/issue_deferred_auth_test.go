package work_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestIssueCollectionAuthWithProject: GET and POST /projects/{key}/issues read the
// access token's user row with the project, in one statement. The row is checked as
// everywhere else: an unknown, inactive, deleted or revoked user is 401 with
// WWW-Authenticate (also for an unknown project key), before the role is looked at.
func TestIssueCollectionAuthWithProject(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	list, create := f.Path("/issues"), map[string]any{"title": "x"}
	call := func(method string, u apitest.User, path string) *apitest.Response {
		var body any
		if method == "POST" {
			body = create
		}
		return h.Do(method, path, body, u.Access)
	}
	unauthorized := func(r *apitest.Response) {
		t.Helper()
		apitest.RequireProblem(t, r, http.StatusUnauthorized, "UNAUTHORIZED", apitest.NoReason)
		require.Equal(t, "Bearer", r.Header.Get("WWW-Authenticate"))
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := h.DB.Pool.Exec(context.Background(), sql, args...)
		require.NoError(t, err)
	}

	for _, m := range []string{"GET", "POST"} {
		require.Contains(t, []int{200, 201}, call(m, f.Member, list).Status, m)
		apitest.RequireProblem(t, call(m, f.Outsider, list), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
		apitest.RequireProblem(t, call(m, f.Member, "/api/v1/projects/NOSUCH/issues"), 404, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
		unauthorized(h.Do(m, list, create, "not-a-token"))
		unauthorized(h.Do(m, list, create, ""))
	}
	apitest.RequireProblem(t, call("POST", f.Viewer, list), 403, "FORBIDDEN", apitest.NoReason)

	// The principal is complete after the combined read: the reporter is the caller,
	// assigneeMe reads the caller's id.
	iss := f.Create(t, map[string]any{"title": "Mine", "assigneeId": f.Owner.ID})
	require.Equal(t, f.Owner.ID.String(), iss["reporterId"])
	require.Equal(t, "Owner", iss["reporterName"])
	require.Equal(t, []string{iss["key"].(string)}, listKeys(f, t, f.Owner.Access, "assigneeMe=true"))

	exec("UPDATE users SET active = false WHERE id = $1", f.Member.ID)
	for _, m := range []string{"GET", "POST"} {
		unauthorized(call(m, f.Member, list))
		unauthorized(call(m, f.Member, "/api/v1/projects/NOSUCH/issues"))
	}
	exec("UPDATE users SET active = true, deleted_at = now() WHERE id = $1", f.Member.ID)
	unauthorized(call("GET", f.Member, list))
	exec("UPDATE users SET deleted_at = NULL, tokens_not_before = now() + interval '1 minute' WHERE id = $1", f.Member.ID)
	unauthorized(call("POST", f.Member, list))
	unauthorized(call("GET", f.Member, list))
	exec("UPDATE users SET tokens_not_before = 'epoch' WHERE id = $1", f.Member.ID)
	require.Equal(t, http.StatusOK, call("GET", f.Member, list).Status)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM issues WHERE project_id = $1 AND title = 'x' AND reporter_id <> $2", f.ProjectID, f.Member.ID))
}
