package admin_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestAdminUsersNeedAdmin(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	member := h.Register("Plain")
	h.SetSystemRole(member, "MEMBER")
	target := h.Register("Target")
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/admin/users"},
		{"POST", "/api/v1/admin/users/" + target.ID.String() + "/deactivate"},
		{"POST", "/api/v1/admin/users/" + target.ID.String() + "/activate"},
		{"DELETE", "/api/v1/admin/users/" + target.ID.String()},
		{"POST", "/api/v1/admin/users/" + target.ID.String() + "/sign-out"},
	} {
		r := h.Do(c.method, c.path, nil, member.Access)
		require.Equal(t, http.StatusForbidden, r.Status, c.method+" "+c.path)
		require.Equal(t, "FORBIDDEN", r.JSON(t)["code"])
		require.Equal(t, http.StatusUnauthorized, h.Do(c.method, c.path, nil, "").Status)
	}
	require.Equal(t, 1, h.Count("SELECT count(*) FROM users WHERE id = $1 AND active AND deleted_at IS NULL", target.ID))
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/auth/me", nil, target.Access).Status, "the target is still signed in")
}

func TestAdminDeactivateActivateDelete(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	admin := h.Register("Admin")
	u := h.Register("Worker")
	pat := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "ci"}, u.Access).JSON(t)["plaintext"].(string)

	list := h.Do("GET", "/api/v1/admin/users", nil, admin.Access)
	require.Equal(t, http.StatusOK, list.Status)
	users := list.Array(t)
	require.Len(t, users, 2)
	row := users[1].(map[string]any)
	require.Equal(t, "MEMBER", row["systemRole"])
	require.Equal(t, "MEMBER", row["role"])
	require.Equal(t, true, row["active"])
	for _, k := range []string{"id", "email", "displayName", "avatarUrl", "language", "createdAt"} {
		require.Contains(t, row, k)
	}

	require.Equal(t, http.StatusNoContent, h.Do("POST", "/api/v1/admin/users/"+u.ID.String()+"/deactivate", nil, admin.Access).Status)
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/auth/me", nil, u.Access).Status, "access JWT revoked")
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/auth/me", nil, pat).Status, "PAT revoked")
	require.Equal(t, http.StatusForbidden, h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": u.Refresh}, "").Status)
	require.Equal(t, http.StatusForbidden, h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, "").Status)
	require.Equal(t, false, h.Do("GET", "/api/v1/admin/users", nil, admin.Access).Array(t)[1].(map[string]any)["active"])

	require.Equal(t, http.StatusNoContent, h.Do("POST", "/api/v1/admin/users/"+u.ID.String()+"/activate", nil, admin.Access).Status)
	login := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, "")
	require.Equal(t, http.StatusOK, login.Status)
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/auth/me", nil, login.JSON(t)["accessToken"].(string)).Status)
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/auth/me", nil, u.Access).Status, "tokens from before the deactivation stay invalid")
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/auth/me", nil, pat).Status, "revoked PATs stay revoked")

	require.Equal(t, http.StatusNoContent, h.Do("DELETE", "/api/v1/admin/users/"+u.ID.String(), nil, admin.Access).Status)
	require.Len(t, h.Do("GET", "/api/v1/admin/users", nil, admin.Access).Array(t), 1, "soft-deleted users are left out")
	again := h.Do("POST", "/api/v1/admin/users/"+u.ID.String()+"/activate", nil, admin.Access)
	require.Equal(t, http.StatusConflict, again.Status)
	require.Equal(t, "USER_DELETED", again.JSON(t)["reason"])
	require.Equal(t, http.StatusNotFound, h.Do("DELETE", "/api/v1/admin/users/"+u.ID.String(), nil, admin.Access).Status)
	require.Equal(t, http.StatusNotFound, h.Do("POST", "/api/v1/admin/users/"+uuid.NewString()+"/deactivate", nil, admin.Access).Status)
	require.Equal(t, http.StatusBadRequest, h.Do("POST", "/api/v1/admin/users/nope/deactivate", nil, admin.Access).Status)
}

func TestLastActiveAdmin(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	admin := h.Register("Only")
	member := h.Register("Member")

	for _, r := range []*apitest.Response{
		h.Do("POST", "/api/v1/admin/users/"+admin.ID.String()+"/deactivate", nil, admin.Access),
		h.Do("DELETE", "/api/v1/admin/users/"+admin.ID.String(), nil, admin.Access),
		h.Do("DELETE", "/api/v1/me", nil, admin.Access),
	} {
		require.Equal(t, http.StatusConflict, r.Status)
		require.Equal(t, "LAST_ADMIN", r.JSON(t)["reason"])
	}
	require.Equal(t, 1, h.Count("SELECT count(*) FROM users WHERE id = $1 AND active AND deleted_at IS NULL", admin.ID), "refusal changed nothing")
	require.Equal(t, 0, h.Count("SELECT count(*) FROM refresh_tokens WHERE user_id = $1 AND revoked", admin.ID), "no token revoked")
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/auth/me", nil, admin.Access).Status)

	// With a second admin, the first may go; then the second is the last.
	h.MakeAdmin(member)
	require.Equal(t, http.StatusNoContent, h.Do("POST", "/api/v1/admin/users/"+admin.ID.String()+"/deactivate", nil, member.Access).Status)
	r := h.Do("DELETE", "/api/v1/me", nil, member.Access)
	require.Equal(t, http.StatusConflict, r.Status)
	// An inactive admin may be deleted while another stays active.
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", "/api/v1/admin/users/"+admin.ID.String(), nil, member.Access).Status)
}
