package account_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestUpdateMe(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Profile")
	r := h.Do("PATCH", "/api/v1/me", map[string]any{"displayName": "  New Name ", "avatarUrl": "https://example.com/a.png"}, u.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.Equal(t, "New Name", m["displayName"])
	require.Equal(t, "https://example.com/a.png", m["avatarUrl"])

	require.Equal(t, http.StatusOK, h.Do("PATCH", "/api/v1/me", map[string]any{"avatarUrl": ""}, u.Access).Status)
	require.Nil(t, h.Do("GET", "/api/v1/auth/me", nil, u.Access).JSON(t)["avatarUrl"], "empty avatarUrl clears it")

	blank := h.Do("PATCH", "/api/v1/me", map[string]any{"displayName": " "}, u.Access)
	require.Equal(t, http.StatusBadRequest, blank.Status)
	require.Equal(t, "VALIDATION_ERROR", blank.JSON(t)["code"])
	long := h.Do("PATCH", "/api/v1/me", map[string]any{"avatarUrl": "https://e.com/" + strings.Repeat("a", 600)}, u.Access)
	require.Equal(t, http.StatusBadRequest, long.Status)
	require.Equal(t, http.StatusBadRequest, h.Do("PATCH", "/api/v1/me", map[string]any{}, u.Access).Status)
	require.Equal(t, "New Name", h.Do("GET", "/api/v1/auth/me", nil, u.Access).JSON(t)["displayName"], "refusals change nothing")

	require.Equal(t, 2, h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'PROFILE_UPDATED' AND args->>'userId' = $1", u.ID.String()),
		"each successful update enqueued PROFILE_UPDATED, the refusals none")
}

func TestChangePassword(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Passwd")
	pat := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "ci"}, u.Access).JSON(t)["plaintext"].(string)

	wrong := h.Do("POST", "/api/v1/me/password", map[string]any{"currentPassword": "not it at all", "newPassword": "brand new password"}, u.Access)
	require.Equal(t, http.StatusForbidden, wrong.Status)
	require.Equal(t, "INVALID_CURRENT_PASSWORD", wrong.JSON(t)["reason"])

	ws := h.Do("POST", "/api/v1/me/password", map[string]any{"currentPassword": apitest.Password, "newPassword": "\t        \n"}, u.Access)
	require.Equal(t, http.StatusBadRequest, ws.Status)
	require.Contains(t, ws.JSON(t)["details"], "newPassword")

	ok := h.Do("POST", "/api/v1/me/password", map[string]any{"currentPassword": apitest.Password, "newPassword": "brand new password"}, u.Access)
	require.Equal(t, http.StatusNoContent, ok.Status, "%s", ok.Body)
	require.Empty(t, ok.Body)

	require.Equal(t, http.StatusForbidden, h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": u.Refresh}, "").Status, "refresh tokens revoked")
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/auth/me", nil, pat).Status, "personal access tokens stay valid")
	require.Equal(t, http.StatusForbidden, h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, "").Status)
	require.Equal(t, http.StatusOK, h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": "brand new password"}, "").Status)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE args->>'action' = 'PASSWORD_CHANGED' AND args->>'userId' = $1", u.ID.String()))
}

func TestChangePasswordWithoutPassword(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("OAuthOnly")
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE users SET password_hash = NULL, oauth_provider = 'github' WHERE id = $1", u.ID)
	require.NoError(t, err)
	r := h.Do("POST", "/api/v1/me/password", map[string]any{"currentPassword": "anything", "newPassword": "brand new password"}, u.Access)
	require.Equal(t, http.StatusConflict, r.Status)
	require.Equal(t, "NO_PASSWORD", r.JSON(t)["reason"])
}

func TestDeleteMeAnonymizes(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Leaver")
	pat := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "ci"}, u.Access).JSON(t)["plaintext"].(string)
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE users SET avatar_url = 'https://x/y.png', oauth_provider = 'github', oauth_subject = '42' WHERE id = $1", u.ID)
	require.NoError(t, err)

	require.Equal(t, http.StatusNoContent, h.Do("DELETE", "/api/v1/me", nil, u.Access).Status)

	var email, name string
	var hash, avatar, provider, subject *string
	var deleted bool
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		"SELECT email, display_name, password_hash, avatar_url, oauth_provider, oauth_subject, deleted_at IS NOT NULL FROM users WHERE id = $1", u.ID).
		Scan(&email, &name, &hash, &avatar, &provider, &subject, &deleted))
	require.True(t, deleted, "row kept with deletedAt")
	require.NotEqual(t, u.Email, email)
	require.NotContains(t, email, strings.Split(u.Email, "@")[0])
	require.Equal(t, "Deleted user", name)
	require.Nil(t, hash)
	require.Nil(t, avatar)
	require.Nil(t, provider)
	require.Nil(t, subject)

	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/auth/me", nil, u.Access).Status, "access token revoked")
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/auth/me", nil, pat).Status, "tokens revoked")
	require.Equal(t, http.StatusForbidden, h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": u.Refresh}, "").Status)
	require.Equal(t, http.StatusForbidden, h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, "").Status)
	// The address is free again.
	r := h.Do("POST", "/api/v1/auth/register", map[string]any{"email": u.Email, "displayName": "Again", "password": apitest.Password}, "")
	require.Equal(t, http.StatusCreated, r.Status)
}

func TestNotificationPreferences(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Prefs")
	r := h.Do("GET", "/api/v1/me/notification-preferences", nil, u.Access)
	require.Equal(t, http.StatusOK, r.Status)
	prefs := r.JSON(t)["preferences"].([]any)
	// The documented eight, then the service desk's SLA_RESPONSE_BREACHED.
	require.Len(t, prefs, 9)
	require.Equal(t, "SLA_RESPONSE_BREACHED", prefs[8].(map[string]any)["type"])
	first := prefs[0].(map[string]any)
	require.Equal(t, "COMMENT_MENTION", first["type"])
	require.Equal(t, true, first["inApp"])
	require.Equal(t, true, first["email"])

	put := h.Do("PUT", "/api/v1/me/notification-preferences", map[string]any{"preferences": []any{
		map[string]any{"type": "ISSUE_ASSIGNED", "inApp": false, "email": true},
		map[string]any{"type": "ISSUE_ASSIGNED", "inApp": false, "email": false},
	}}, u.Access)
	require.Equal(t, http.StatusOK, put.Status, "%s", put.Body)
	got := put.JSON(t)["preferences"].([]any)
	require.Len(t, got, 9)
	assigned := got[1].(map[string]any)
	require.Equal(t, "ISSUE_ASSIGNED", assigned["type"])
	require.Equal(t, false, assigned["inApp"])
	require.Equal(t, false, assigned["email"])

	bad := h.Do("PUT", "/api/v1/me/notification-preferences", map[string]any{"preferences": []any{map[string]any{"type": "NOPE", "inApp": true}}}, u.Access)
	require.Equal(t, http.StatusBadRequest, bad.Status)
	require.Equal(t, "UNKNOWN_NOTIFICATION_TYPE", bad.JSON(t)["reason"])
}
