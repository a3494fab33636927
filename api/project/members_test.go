package project_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestProjectMembers(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	owner, admin, ada := h.Register("Owner"), h.Register("Admin"), h.Register("Ada")
	key := apitest.PostProject(t, h, owner.Access)
	path := "/api/v1/projects/" + key + "/members"

	list := h.Do("GET", path, nil, owner.Access).Array(t)
	require.Len(t, list, 1)
	first := list[0].(map[string]any)
	require.Equal(t, "ADMIN", first["role"])
	require.Equal(t, owner.ID.String(), first["user"].(map[string]any)["id"])

	r := h.Do("POST", path, map[string]any{"userId": ada.ID, "role": "VIEWER"}, owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.Equal(t, "VIEWER", m["role"])
	user := m["user"].(map[string]any)
	require.Equal(t, ada.Email, user["email"])
	require.Equal(t, "Ada", user["displayName"])
	for _, k := range []string{"id", "email", "displayName", "avatarUrl", "role", "language", "orgId", "createdAt"} {
		require.Contains(t, user, k, "user is a UserResponse")
	}
	apitest.PostMember(t, h, owner.Access, key, admin.ID, "ADMIN")

	list = h.Do("GET", path, nil, ada.Access).Array(t)
	require.Len(t, list, 3, "a VIEWER reads the members")
	var ids []string
	for _, item := range list {
		ids = append(ids, item.(map[string]any)["user"].(map[string]any)["id"].(string))
	}
	require.Equal(t, []string{owner.ID.String(), ada.ID.String(), admin.ID.String()}, ids, "owner first, then by join time")

	// PATCH: another ADMIN changes roles, but not their own nor the owner's.
	r = h.Do("PATCH", path+"/"+ada.ID.String(), map[string]any{"role": "MEMBER"}, admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "MEMBER", r.JSON(t)["role"])
	require.Equal(t, ada.ID.String(), r.JSON(t)["user"].(map[string]any)["id"])
	apitest.RequireProblem(t, h.Do("PATCH", path+"/"+admin.ID.String(), map[string]any{"role": "VIEWER"}, admin.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("OWN_ROLE"))
	apitest.RequireProblem(t, h.Do("PATCH", path+"/"+owner.ID.String(), map[string]any{"role": "VIEWER"}, admin.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("PROJECT_OWNER"))
	apitest.RequireProblem(t, h.Do("PATCH", path+"/"+owner.ID.String(), map[string]any{"role": "VIEWER"}, owner.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("OWN_ROLE"))
	apitest.RequireProblem(t, h.Do("PATCH", path+"/"+uuid.NewString(), map[string]any{"role": "VIEWER"}, admin.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("MEMBER_NOT_FOUND"))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM project_members pm JOIN projects p ON p.id = pm.project_id WHERE p.key = $1 AND pm.user_id = $2 AND pm.role = 'ADMIN'", key, admin.ID))

	// DELETE: never the owner.
	apitest.RequireProblem(t, h.Do("DELETE", path+"/"+owner.ID.String(), nil, admin.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("PROJECT_OWNER"))
	apitest.RequireProblem(t, h.Do("DELETE", path+"/"+uuid.NewString(), nil, admin.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("MEMBER_NOT_FOUND"))
	r = h.Do("DELETE", path+"/"+ada.ID.String(), nil, admin.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/projects/"+key, nil, ada.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	require.Len(t, h.Do("GET", path, nil, owner.Access).Array(t), 2)
}

func TestAddProjectMemberRejects(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	owner, member, ada := h.Register("Owner"), h.Register("Member"), h.Register("Ada")
	key := apitest.PostProject(t, h, owner.Access)
	apitest.PostMember(t, h, owner.Access, key, member.ID, "MEMBER")
	path := "/api/v1/projects/" + key + "/members"
	deleted := h.Register("Deleted")
	_, err := h.DB.Pool.Exec(t.Context(), "UPDATE users SET deleted_at = now() WHERE id = $1", deleted.ID)
	require.NoError(t, err)

	for _, c := range []struct {
		name   string
		body   any
		status int
		code   string
		reason string
	}{
		{"no userId", map[string]any{"role": "MEMBER"}, 400, "BAD_REQUEST", "MISSING_FIELD"},
		{"no role", map[string]any{"userId": ada.ID}, 400, "BAD_REQUEST", "MISSING_FIELD"},
		{"bad role", map[string]any{"userId": ada.ID, "role": "OWNER"}, 400, "BAD_REQUEST", "INVALID_ROLE"},
		{"lower-case role", map[string]any{"userId": ada.ID, "role": "member"}, 400, "BAD_REQUEST", "INVALID_ROLE"},
		{"role of wrong type", map[string]any{"userId": ada.ID, "role": 3}, 400, "BAD_REQUEST", "WRONG_TYPE"},
		{"malformed id", map[string]any{"userId": "ada", "role": "MEMBER"}, 400, "BAD_REQUEST", "INVALID_UUID"},
		{"unknown user", map[string]any{"userId": uuid.New(), "role": "MEMBER"}, 404, "NOT_FOUND", "USER_NOT_FOUND"},
		{"deleted user", map[string]any{"userId": deleted.ID, "role": "MEMBER"}, 404, "NOT_FOUND", "USER_NOT_FOUND"},
		{"already a member", map[string]any{"userId": member.ID, "role": "ADMIN"}, 409, "CONFLICT", "ALREADY_MEMBER"},
		{"the owner", map[string]any{"userId": owner.ID, "role": "VIEWER"}, 409, "CONFLICT", "ALREADY_MEMBER"},
	} {
		apitest.RequireProblem(t, h.Do("POST", path, c.body, owner.Access), c.status, c.code, apitest.ReasonOrNone(c.reason))
	}
	apitest.RequireProblem(t, h.Do("PATCH", path+"/"+member.ID.String(), map[string]any{"role": "GOD"}, owner.Access), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_ROLE"))
	apitest.RequireProblem(t, h.Do("PATCH", path+"/"+member.ID.String(), map[string]any{}, owner.Access), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))
	apitest.RequireProblem(t, h.Do("PATCH", path+"/nope", map[string]any{"role": "VIEWER"}, owner.Access), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	require.Equal(t, 2, h.Count("SELECT count(*) FROM project_members pm JOIN projects p ON p.id = pm.project_id WHERE p.key = $1", key), "nothing changed")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM project_members WHERE user_id = $1 AND role = 'MEMBER'", member.ID))
}

// TestMemberChangesAreAudited: MEMBER_ADDED and MEMBER_REMOVED (WRITE) and ROLE_CHANGED
// (SECURITY) are jobs on the change's own transaction, with the project id; a refused
// change enqueues nothing.
func TestMemberChangesAreAudited(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	apitest.SetAuditLevel(t, h, "WRITE", true)
	owner, ada := h.Register("Owner"), h.Register("Ada")
	key := apitest.PostProject(t, h, owner.Access)
	projectID := h.Do("GET", "/api/v1/projects/"+key, nil, owner.Access).JSON(t)["id"]
	path := "/api/v1/projects/" + key + "/members"
	jobs := func(action string) int {
		return h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = $1
			AND args->>'projectId' = $2 AND args->>'resourceId' = $3`, action, projectID, ada.ID.String())
	}

	apitest.PostMember(t, h, owner.Access, key, ada.ID, "VIEWER")
	require.Equal(t, 1, jobs("MEMBER_ADDED"))
	require.Equal(t, http.StatusConflict, h.Do("POST", path, map[string]any{"userId": ada.ID, "role": "VIEWER"}, owner.Access).Status)
	require.Equal(t, 1, jobs("MEMBER_ADDED"), "the refused add enqueued nothing")

	require.Equal(t, http.StatusOK, h.Do("PATCH", path+"/"+ada.ID.String(), map[string]any{"role": "ADMIN"}, owner.Access).Status)
	require.Equal(t, 1, jobs("ROLE_CHANGED"))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE args->>'action' = 'ROLE_CHANGED' AND args->>'level' = 'SECURITY' AND args->>'details' LIKE '%ADMIN%'"))
	require.Equal(t, http.StatusForbidden, h.Do("PATCH", path+"/"+ada.ID.String(), map[string]any{"role": "VIEWER"}, ada.Access).Status)
	require.Equal(t, 1, jobs("ROLE_CHANGED"), "the refused change enqueued nothing")

	require.Equal(t, http.StatusNoContent, h.Do("DELETE", path+"/"+ada.ID.String(), nil, owner.Access).Status)
	require.Equal(t, 1, jobs("MEMBER_REMOVED"))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE args->>'action' = 'MEMBER_REMOVED' AND args->>'level' = 'WRITE' AND args->>'userId' = $1", owner.ID.String()))
}
