package project_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/auth"
)

func TestProjectAPIKeys(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	owner, writer, viewer := h.Register("Owner"), h.Register("Writer"), h.Register("Viewer")
	key := apitest.PostProject(t, h, owner.Access)
	apitest.PostMember(t, h, owner.Access, key, writer.ID, "MEMBER")
	apitest.PostMember(t, h, owner.Access, key, viewer.ID, "VIEWER")
	path := "/api/v1/projects/" + key + "/api-keys"

	expires := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	r := h.Do("POST", path, map[string]any{"name": "ci", "expiresAt": expires}, writer.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	created := r.JSON(t)
	plain := created["plaintext"].(string)
	require.True(t, strings.HasPrefix(plain, "tw_"))
	require.NotContains(t, plain, "twk_")
	require.Len(t, plain, 3+32, "tw_ + base64url of 24 bytes")
	require.Equal(t, plain[:12], created["keyPrefix"])
	require.Equal(t, "ci", created["name"])
	require.Equal(t, expires.Format(time.RFC3339), created["expiresAt"])
	require.Contains(t, created, "createdAt")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM project_api_keys WHERE key_hash = $1 AND key_prefix = $2 AND created_by = $3", auth.HashToken(plain), plain[:12], writer.ID))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM project_api_keys WHERE key_hash = $1 OR key_prefix = $1 OR name = $1", plain), "plaintext never stored")

	r = h.Do("POST", path, map[string]any{"name": "no expiry"}, owner.Access)
	require.Equal(t, http.StatusCreated, r.Status)
	require.Nil(t, r.JSON(t)["expiresAt"])
	require.Contains(t, r.JSON(t), "expiresAt")

	apitest.RequireProblem(t, h.Do("POST", path, map[string]any{"name": "viewer"}, viewer.Access), http.StatusForbidden, "FORBIDDEN", apitest.NoReason)

	list := h.Do("GET", path, nil, viewer.Access).Array(t)
	require.Len(t, list, 2, "a VIEWER lists keys")
	item := list[0].(map[string]any)
	require.NotContains(t, item, "plaintext")
	require.Len(t, item, 6)
	for _, k := range []string{"id", "name", "keyPrefix", "lastUsedAt", "expiresAt", "createdAt"} {
		require.Contains(t, item, k)
	}
	require.Equal(t, created["id"], item["id"], "oldest first")

	id := created["id"].(string)
	apitest.RequireProblem(t, h.Do("DELETE", path+"/"+id, nil, writer.Access), http.StatusForbidden, "FORBIDDEN", apitest.NoReason)
	other := apitest.PostProject(t, h, owner.Access)
	apitest.RequireProblem(t, h.Do("DELETE", "/api/v1/projects/"+other+"/api-keys/"+id, nil, owner.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("API_KEY_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("DELETE", path+"/"+uuid.NewString(), nil, owner.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("API_KEY_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("DELETE", path+"/x", nil, owner.Access), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/projects/"+key, nil, plain).Status, "still valid")

	r = h.Do("DELETE", path+"/"+id, nil, owner.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/projects/"+key, nil, plain).Status, "deleted keys no longer authenticate")
	require.Len(t, h.Do("GET", path, nil, owner.Access).Array(t), 1)

	for _, action := range []string{"API_KEY_CREATED", "API_KEY_DELETED"} {
		require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = $1
			AND args->>'level' = 'SECURITY' AND args->>'resourceId' = $2 AND args->>'projectId' = $3`,
			action, id, h.Do("GET", "/api/v1/projects/"+key, nil, owner.Access).JSON(t)["id"]), action)
	}
}

func TestCreateProjectAPIKeyRejects(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	owner := h.Register("Owner")
	key := apitest.PostProject(t, h, owner.Access)
	path := "/api/v1/projects/" + key + "/api-keys"
	for _, c := range []struct {
		body  any
		code  string
		field string
		// reason is the problem's reason; "" for none.
		reason string
	}{
		{map[string]any{}, "BAD_REQUEST", "", "MISSING_FIELD"},
		{map[string]any{"name": 5}, "BAD_REQUEST", "", "WRONG_TYPE"},
		{map[string]any{"name": "x", "expiresAt": "tomorrow"}, "BAD_REQUEST", "", "MALFORMED_JSON"},
		{map[string]any{"name": "  "}, "VALIDATION_ERROR", "name", ""},
		{map[string]any{"name": strings.Repeat("k", 256)}, "VALIDATION_ERROR", "name", ""},
		{map[string]any{"name": "old", "expiresAt": time.Now().Add(-time.Hour)}, "VALIDATION_ERROR", "expiresAt", ""},
		{map[string]any{"name": "\x00"}, "VALIDATION_ERROR", "name", "NUL_CHARACTER"},
	} {
		m := apitest.RequireProblem(t, h.Do("POST", path, c.body, owner.Access), http.StatusBadRequest, c.code, apitest.ReasonOrNone(c.reason))
		if c.field != "" {
			require.Contains(t, m["details"], c.field)
		}
	}
	require.Empty(t, h.Do("GET", path, nil, owner.Access).Array(t))
}

// TestProjectAPIKeyScope: a key acts with its creator's rights, only inside its project.
func TestProjectAPIKeyScope(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	creator, owner := h.Register("Creator"), h.Register("Owner")
	h.MakeAdmin(creator)
	key := apitest.PostProject(t, h, owner.Access)
	apitest.PostMember(t, h, owner.Access, key, creator.ID, "MEMBER")
	elsewhere := apitest.PostProject(t, h, creator.Access)

	r := h.Do("POST", "/api/v1/projects/"+key+"/api-keys", map[string]any{"name": "bot"}, creator.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	plain := r.JSON(t)["plaintext"].(string)
	keyID := r.JSON(t)["id"].(string)

	got := h.Do("GET", "/api/v1/projects/"+key, nil, plain)
	require.Equal(t, http.StatusOK, got.Status, "%s", got.Body)
	require.Equal(t, "MEMBER", got.JSON(t)["myRole"], "the creator's rights")
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/projects/"+key+"/members", nil, plain).Status)
	require.Equal(t, http.StatusCreated, h.Do("POST", "/api/v1/projects/"+key+"/labels", map[string]any{"name": "bot", "color": "#000000"}, plain).Status, "MEMBER writes")
	apitest.RequireProblem(t, h.Do("DELETE", "/api/v1/projects/"+key+"/api-keys/"+keyID, nil, plain), http.StatusForbidden, "FORBIDDEN", apitest.NoReason)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM project_api_keys WHERE id = $1 AND last_used_at IS NOT NULL", keyID))

	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/projects/" + elsewhere},
		{"GET", "/api/v1/projects/" + key + "X"},
		{"GET", "/api/v1/projects"},
		{"POST", "/api/v1/projects"},
		{"GET", "/api/v1/admin/users"},
		{"GET", "/api/v1/auth/me"},
		{"GET", "/api/v1/organizations/mine"},
		{"GET", "/api/v1/users/search?q=own"},
	} {
		apitest.RequireProblem(t, h.Do(c.method, c.path, map[string]any{"key": apitest.UniqueProjectKey(), "name": "x"}, plain), http.StatusForbidden, "FORBIDDEN", apitest.Reason("API_KEY_SCOPE"))
	}
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/projects/"+elsewhere, nil, creator.Access).Status, "the creator itself may")

	// Only while the creator is active.
	_, err := h.DB.Pool.Exec(t.Context(), "UPDATE users SET active = false WHERE id = $1", creator.ID)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/projects/"+key, nil, plain).Status)
}
