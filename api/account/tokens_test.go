package account_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/auth"
)

func TestPersonalAccessTokens(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Pat")

	r := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "ci"}, u.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	created := r.JSON(t)
	plain := created["plaintext"].(string)
	require.True(t, strings.HasPrefix(plain, "twk_"))
	require.Len(t, plain, 4+43, "twk_ + base64url of 32 bytes")
	require.Equal(t, plain[:12], created["tokenPrefix"])
	require.Equal(t, "READ_WRITE", created["scope"], "scope defaults to READ_WRITE")
	require.Contains(t, created, "expiresAt")
	require.Equal(t, 0, h.Count("SELECT count(*) FROM personal_access_tokens WHERE token_hash = $1 OR token_prefix = $1", plain), "plaintext never stored")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM personal_access_tokens WHERE token_hash = $1", auth.HashToken(plain)))

	me := h.Do("GET", "/api/v1/auth/me", nil, plain)
	require.Equal(t, http.StatusOK, me.Status)
	require.Equal(t, u.ID.String(), me.JSON(t)["id"])
	require.Equal(t, 1, h.Count("SELECT count(*) FROM personal_access_tokens WHERE token_hash = $1 AND last_used_at IS NOT NULL", auth.HashToken(plain)))

	list := h.Do("GET", "/api/v1/me/tokens", nil, u.Access).Array(t)
	require.Len(t, list, 1)
	item := list[0].(map[string]any)
	require.NotContains(t, item, "plaintext")
	for _, k := range []string{"id", "name", "tokenPrefix", "scope", "lastUsedAt", "expiresAt", "createdAt"} {
		require.Contains(t, item, k)
	}

	// READ_WRITE tokens have the owner's rights, writes included.
	require.Equal(t, http.StatusOK, h.Do("PATCH", "/api/v1/me", map[string]any{"displayName": "Via PAT"}, plain).Status)

	other := h.Register("Other")
	require.Equal(t, http.StatusNotFound, h.Do("DELETE", "/api/v1/me/tokens/"+created["id"].(string), nil, other.Access).Status, "another user's token is not found")
	require.Equal(t, http.StatusBadRequest, h.Do("DELETE", "/api/v1/me/tokens/not-a-uuid", nil, u.Access).Status)

	require.Equal(t, http.StatusNoContent, h.Do("DELETE", "/api/v1/me/tokens/"+created["id"].(string), nil, u.Access).Status)
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/auth/me", nil, plain).Status, "revoked")
	require.Empty(t, h.Do("GET", "/api/v1/me/tokens", nil, u.Access).Array(t), "revoked tokens are left out")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM personal_access_tokens WHERE id = $1 AND revoked_at IS NOT NULL", created["id"]), "row kept")
	require.Equal(t, http.StatusNotFound, h.Do("DELETE", "/api/v1/me/tokens/"+created["id"].(string), nil, u.Access).Status)
}

func TestReadOnlyTokenCannotWrite(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("ReadOnly")
	plain := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "ro", "scope": "READ_ONLY"}, u.Access).JSON(t)["plaintext"].(string)

	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/auth/me", nil, plain).Status)
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/me/tokens", nil, plain).Status)
	for _, c := range []struct{ method, path string }{
		{"PATCH", "/api/v1/me"}, {"POST", "/api/v1/me/tokens"}, {"POST", "/api/v1/auth/logout"}, {"DELETE", "/api/v1/me"}, {"PUT", "/api/v1/me/notification-preferences"},
	} {
		r := h.Do(c.method, c.path, map[string]any{"displayName": "x", "name": "x"}, plain)
		require.Equal(t, http.StatusForbidden, r.Status, c.method+" "+c.path)
		require.Equal(t, "READ_ONLY_TOKEN", r.JSON(t)["reason"])
	}
	require.Equal(t, u.Email, h.Do("GET", "/api/v1/auth/me", nil, u.Access).JSON(t)["email"], "user not deleted")
}

func TestTokenValidation(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("TokVal")
	require.Equal(t, "BAD_REQUEST", h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "x", "scope": "ADMIN"}, u.Access).JSON(t)["code"])
	require.Equal(t, "BAD_REQUEST", h.Do("POST", "/api/v1/me/tokens", map[string]any{}, u.Access).JSON(t)["code"])
	require.Equal(t, "VALIDATION_ERROR", h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": " "}, u.Access).JSON(t)["code"])
	past := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "old", "expiresAt": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}, u.Access)
	require.Equal(t, "VALIDATION_ERROR", past.JSON(t)["code"])
	require.Equal(t, 0, h.Count("SELECT count(*) FROM personal_access_tokens WHERE user_id = $1", u.ID))
}

func TestExpiredAndInactiveTokens(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Expiring")
	exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "soon", "expiresAt": exp}, u.Access).JSON(t)
	plain := r["plaintext"].(string)
	require.Equal(t, exp, r["expiresAt"])
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/auth/me", nil, plain).Status)

	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE personal_access_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", r["id"])
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/auth/me", nil, plain).Status, "expired")

	second := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "live"}, u.Access).JSON(t)["plaintext"].(string)
	_, err = h.DB.Pool.Exec(context.Background(), "UPDATE users SET active = false WHERE id = $1", u.ID)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/auth/me", nil, second).Status, "active flag re-checked on every request")
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/auth/me", nil, u.Access).Status, "for JWTs too")
}

// insertAPIKey creates a project and a key of it directly: the endpoints come with projects.
func insertAPIKey(t *testing.T, h *apitest.Harness, owner apitest.User, projectKey string, expires *time.Time) string {
	t.Helper()
	ctx := context.Background()
	pid := uuid.New()
	_, err := h.DB.Pool.Exec(ctx, "INSERT INTO projects (id, key, name, owner_id) VALUES ($1, $2, $3, $4)", pid, projectKey, "P "+projectKey, owner.ID)
	require.NoError(t, err)
	plain, err := auth.NewAPIKey()
	require.NoError(t, err)
	_, err = h.DB.Pool.Exec(ctx, "INSERT INTO project_api_keys (name, key_hash, key_prefix, project_id, created_by, expires_at) VALUES ('k', $1, $2, $3, $4, $5)",
		auth.HashToken(plain), auth.Prefix(plain), pid, owner.ID, expires)
	require.NoError(t, err)
	return plain
}

func TestAPIKeyStaysInItsProject(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	owner := h.Register("KeyOwner")
	h.MakeAdmin(owner)
	key := insertAPIKey(t, h, owner, "AK"+strings.ToUpper(uuid.NewString()[:6]), nil)
	require.True(t, strings.HasPrefix(key, "tw_"))
	require.Len(t, key, 3+32, "tw_ + base64url of 24 bytes")

	var projectKey string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		"SELECT p.key FROM project_api_keys k JOIN projects p ON p.id = k.project_id WHERE k.key_hash = $1", auth.HashToken(key)).Scan(&projectKey))

	// Inside its project the key acts with its creator's rights (the owner here).
	in := h.Do("GET", "/api/v1/projects/"+projectKey+"/issues", nil, key)
	require.Equal(t, http.StatusOK, in.Status, "%s", in.Body)

	for _, p := range []string{"/api/v1/auth/me", "/api/v1/admin/users", "/api/v1/projects/OTHER/issues", "/api/v1/projects/" + projectKey + "X/issues"} {
		r := h.Do("GET", p, nil, key)
		require.Equal(t, http.StatusForbidden, r.Status, p)
		require.Equal(t, "API_KEY_SCOPE", r.JSON(t)["reason"], p)
	}

	past := time.Now().Add(-time.Minute)
	expired := insertAPIKey(t, h, owner, "AX"+strings.ToUpper(uuid.NewString()[:6]), &past)
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/auth/me", nil, expired).Status)

	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE users SET active = false WHERE id = $1", owner.ID)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/projects/"+projectKey+"/issues", nil, key).Status, "only while the creator is active")
}
