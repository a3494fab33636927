package work_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestDeferredCredentialJudgedLikeTheMiddleware: a personal access token or API key on
// the board and the issue list is read with the project (one statement) and answered
// exactly as on a route that checks it before the handler (the project's own GET):
// unknown, expired, revoked or a disabled user's 401, another project's API key 403
// API_KEY_SCOPE, an unknown project 404 for a valid credential and 401 for a bad one,
// a non-member 403; a READ_ONLY token reads, and still may not create; the read
// records lastUsedAt.
func TestDeferredCredentialJudgedLikeTheMiddleware(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	other := apitest.NewProject(t, h)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := h.DB.Pool.Exec(context.Background(), sql, args...)
		require.NoError(t, err)
	}
	pat := func(u apitest.User, scope string) (plain, id string) {
		t.Helper()
		m := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "script", "scope": scope}, u.Access).JSON(t)
		return m["plaintext"].(string), m["id"].(string)
	}
	// answer is a route's status and error code.
	type answer struct {
		status int
		code   string
	}
	get := func(path, token string) answer {
		t.Helper()
		r := h.Do("GET", path, nil, token)
		a := answer{status: r.Status}
		if r.Status >= 400 {
			m := r.JSON(t)
			a.code, _ = m["code"].(string)
			if reason, ok := m["reason"].(string); ok {
				a.code += "/" + reason
			}
			require.NotEmpty(t, a.code, "%s: %s", path, r.Body)
		}
		return a
	}
	// same: the deferred reads answer token on project key as the project's GET does.
	same := func(name, key, token string, want int) {
		t.Helper()
		base := "/api/v1/projects/" + key
		full := get(base, token)
		require.Equal(t, want, full.status, "%s: the project's GET", name)
		for _, path := range []string{base + "/issues", base + "/board"} {
			got := get(path, token)
			if want == http.StatusOK {
				require.Contains(t, []int{http.StatusOK, http.StatusNoContent}, got.status, "%s: %s", name, path)
				continue
			}
			require.Equal(t, full, got, "%s: %s", name, path)
		}
	}

	member := h.Register("Scripter")
	f.AddMember(t, member, "MEMBER")
	good, _ := pat(member, "READ_WRITE")
	same("valid token", f.Key, good, http.StatusOK)
	same("valid token, unknown project", "NOSUCHPRJ", good, http.StatusNotFound)
	same("valid token, not a member", other.Key, good, http.StatusForbidden)
	same("unknown token", f.Key, "twk_"+"0123456789abcdef0123456789abcdef", http.StatusUnauthorized)
	same("unknown token, unknown project", "NOSUCHPRJ", "twk_"+"0123456789abcdef0123456789abcdef", http.StatusUnauthorized)
	same("unknown API key", f.Key, "tw_"+"0123456789abcdef0123456789abcdef", http.StatusUnauthorized)

	readOnly, _ := pat(member, "READ_ONLY")
	same("READ_ONLY token", f.Key, readOnly, http.StatusOK)
	r := h.Do("POST", f.Path("/issues"), map[string]any{"title": "no"}, readOnly)
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	require.Contains(t, string(r.Body), "READ_ONLY_TOKEN")

	fresh, freshID := pat(member, "READ_WRITE")
	require.Equal(t, http.StatusOK, get(f.Path("/issues"), fresh).status)
	var used bool
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		"SELECT last_used_at IS NOT NULL FROM personal_access_tokens WHERE id = $1", freshID).Scan(&used))
	require.True(t, used, "a deferred read records lastUsedAt")

	expired, expiredID := pat(member, "READ_WRITE")
	exec("UPDATE personal_access_tokens SET expires_at = now() - interval '1 minute' WHERE id = $1", expiredID)
	same("expired token", f.Key, expired, http.StatusUnauthorized)
	revoked, revokedID := pat(member, "READ_WRITE")
	exec("UPDATE personal_access_tokens SET revoked_at = now() WHERE id = $1", revokedID)
	same("revoked token", f.Key, revoked, http.StatusUnauthorized)

	key := h.Do("POST", other.Path("/api-keys"), map[string]any{"name": "other"}, other.Owner.Access).JSON(t)["plaintext"].(string)
	same("another project's API key", f.Key, key, http.StatusForbidden)
	same("another project's API key, unknown project", "NOSUCHPRJ", key, http.StatusForbidden)
	same("an API key in its project", other.Key, key, http.StatusOK)

	disabled := h.Register("Disabled")
	f.AddMember(t, disabled, "MEMBER")
	dis, _ := pat(disabled, "READ_WRITE")
	same("before disabling", f.Key, dis, http.StatusOK)
	exec("UPDATE users SET active = false WHERE id = $1", disabled.ID)
	same("a disabled user's token", f.Key, dis, http.StatusUnauthorized)
}
