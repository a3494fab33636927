package account_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestRefreshTokenReuseRevokesTheFamily: presenting a refresh token that a rotation
// already consumed revokes every refresh token descended from the same login, the
// newest included, so whichever of owner and thief refreshed second locks both out;
// another login of the same user is untouched. The reuse is audited at SECURITY level,
// committed although the request fails; tokens that are merely revoked (logout) or
// unknown are no reuse.
func TestRefreshTokenReuseRevokesTheFamily(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	u := h.Register("Reused")
	other := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, "").JSON(t)["refreshToken"].(string)
	refresh := func(token string, headers ...string) *apitest.Response {
		t.Helper()
		return h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": token}, "", headers...)
	}
	rotate := func(token string) map[string]any {
		t.Helper()
		r := refresh(token)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return r.JSON(t)
	}
	refused := func(r *apitest.Response) {
		t.Helper()
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		require.Equal(t, "INVALID_REFRESH_TOKEN", r.JSON(t)["reason"])
	}

	// The thief copied the first token; the owner rotates twice.
	stolen := u.Refresh
	first := rotate(stolen)
	second := rotate(first["refreshToken"].(string))
	newest := second["refreshToken"].(string)
	sum := sha256.Sum256([]byte(stolen))
	family := func(where string) int {
		t.Helper()
		return h.Count(`SELECT count(*) FROM refresh_tokens WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1) AND `+where,
			hex.EncodeToString(sum[:]))
	}
	require.Equal(t, 2, h.Count(`SELECT count(DISTINCT family_id) FROM refresh_tokens WHERE user_id = $1`, u.ID),
		"two families: the registration's and the second login's")
	require.Equal(t, 3, family("true"), "the rotations stay in the registration's family")
	require.Equal(t, 2, family("rotated_at IS NOT NULL AND revoked"))
	require.Equal(t, 1, family("NOT revoked"))

	refused(refresh(stolen, "User-Agent", "thief/1"))
	refused(refresh(newest)) // the owner's newest token died with the family
	require.Equal(t, 0, family("NOT revoked"), "nothing of the family is live")
	require.Equal(t, http.StatusOK, refresh(other).Status, "the other login keeps working")

	// One audit job for the one reuse: presenting the family's newest token (revoked,
	// never rotated) is no reuse, just a refusal.
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'REFRESH_TOKEN_REUSED'`))
	h.StartWorkers()
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM audit_events WHERE action = 'REFRESH_TOKEN_REUSED'") == 1
	}, "the worker writes the audit row")
	var level, email, userID, resource, agent, details string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `SELECT level, user_email, user_id::text, resource_id,
		coalesce(user_agent, ''), details::text FROM audit_events WHERE action = 'REFRESH_TOKEN_REUSED'`).
		Scan(&level, &email, &userID, &resource, &agent, &details))
	require.Equal(t, "SECURITY", level)
	require.Equal(t, u.Email, email)
	require.Equal(t, u.ID.String(), userID)
	require.Equal(t, u.ID.String(), resource)
	require.Equal(t, "thief/1", agent)
	var d map[string]any
	require.NoError(t, json.Unmarshal([]byte(details), &d))
	require.Equal(t, float64(1), d["revokedTokens"], "the owner's newest token was the family's only live one")
	require.NotEmpty(t, d["familyId"])
	require.NotEmpty(t, d["tokenId"])

	// A second reuse is recorded again; a logged-out token is refused without one.
	refused(refresh(stolen))
	fresh := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, "").JSON(t)
	require.Equal(t, http.StatusNoContent, h.Do("POST", "/api/v1/auth/logout", nil, fresh["accessToken"].(string)).Status)
	refused(refresh(fresh["refreshToken"].(string)))
	refused(refresh(other)) // rotated above, then revoked by the logout: a reuse all the same
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM audit_events WHERE action = 'REFRESH_TOKEN_REUSED'") == 3
	}, "the two later reuses are audited, the logged-out token is not")
}
