package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/api/stomp"
	"github.com/taskweave/taskweave/api/stomp/stomptest"
)

// sessionEnded is the ERROR message of a STOMP session whose sign-in ended.
const sessionEnded = "sign-in was revoked"

// familyOf is the refresh-token family (login session) of a refresh token.
func familyOf(t *testing.T, h *apitest.Harness, refresh string) uuid.UUID {
	t.Helper()
	sum := sha256.Sum256([]byte(refresh))
	var fam uuid.UUID
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT family_id FROM refresh_tokens WHERE token_hash = $1",
		hex.EncodeToString(sum[:])).Scan(&fam))
	return fam
}

// mintAccess signs an access token as the server would, issued at iat and expiring at
// exp, of login session fam (nil: a token without a family claim, as signed before
// access tokens carried one).
func mintAccess(t *testing.T, user uuid.UUID, fam *uuid.UUID, iat, exp time.Time) string {
	t.Helper()
	claims := jwt.MapClaims{"sub": user.String(), "type": "access", "jti": uuid.NewString(),
		"iat": float64(iat.UnixMicro()) / 1e6, "exp": float64(exp.UnixMicro()) / 1e6}
	if fam != nil {
		claims["fam"] = fam.String()
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(apitest.Secret))
	require.NoError(t, err)
	return tok
}

// stompConnect sends CONNECT with token on a new connection to ws.
func stompConnect(t *testing.T, ws, token string) *stomptest.Client {
	t.Helper()
	c, err := stomptest.Dial(context.Background(), ws+"/ws-stomp", "v12.stomp")
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Send(stomp.Frame{Command: "CONNECT", Headers: []stomp.Header{
		{Name: "accept-version", Value: "1.2"}, {Name: "Authorization", Value: "Bearer " + token}}}))
	return c
}

// stompAccepted expects CONNECTED on c.
func stompAccepted(t *testing.T, c *stomptest.Client, msg string) {
	t.Helper()
	_, err := c.Expect("CONNECTED", 5*time.Second)
	require.NoError(t, err, msg)
}

// TestTokenExpiredReason: a 401 for a validly signed access token past its exp says
// TOKEN_EXPIRED, on a route authenticated up front and on one whose user row is read
// with the project (the issue list); a bad token's 401 has no reason.
func TestTokenExpiredReason(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)
	u := f.Owner
	past := time.Now().Add(-time.Hour)
	expired := mintAccess(t, u.ID, nil, past, time.Now().Add(-time.Minute))
	forged, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": u.ID.String(), "type": "access", "jti": "x",
		"iat": past.Unix(), "exp": time.Now().Add(-time.Minute).Unix()}).SignedString([]byte("another-secret-another-secret-another"))
	require.NoError(t, err)
	expiredRefresh, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": u.ID.String(), "type": "refresh", "jti": "x",
		"iat": past.Unix(), "exp": time.Now().Add(-time.Minute).Unix()}).SignedString([]byte(apitest.Secret))
	require.NoError(t, err)

	for _, path := range []string{"/api/v1/auth/me", "/api/v1/projects/" + f.Key + "/issues"} {
		r := h.Do("GET", path, nil, expired)
		require.Equal(t, http.StatusUnauthorized, r.Status, "%s %s", path, r.Body)
		require.Equal(t, "Bearer", r.Header.Get("WWW-Authenticate"))
		m := r.JSON(t)
		require.Equal(t, "UNAUTHORIZED", m["code"], path)
		require.Equal(t, "TOKEN_EXPIRED", m["reason"], path)

		for name, tok := range map[string]string{"garbage": "abc.def.ghi", "forged and expired": forged,
			"expired refresh token": expiredRefresh, "unknown pat": "twk_nope"} {
			r := h.Do("GET", path, nil, tok)
			require.Equal(t, http.StatusUnauthorized, r.Status, "%s %s", path, name)
			require.NotContains(t, r.JSON(t), "reason", "%s %s", path, name)
		}
	}
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/projects/"+f.Key+"/issues", nil, u.Access).Status)
}

// TestRefreshReuseRefusesTheFamilysAccessTokens: once a refresh-token reuse revokes a
// family, the access tokens it issued (before and after the rotation) are refused at
// once, by /auth/me and by the issue list (whose user row is read with the project);
// another login of the same user keeps working.
func TestRefreshReuseRefusesTheFamilysAccessTokens(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)
	u := f.Member
	other := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, "").JSON(t)
	rotated := h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": u.Refresh}, "")
	require.Equal(t, http.StatusOK, rotated.Status, "%s", rotated.Body)
	newAccess := rotated.JSON(t)["accessToken"].(string)
	paths := []string{"/api/v1/auth/me", "/api/v1/projects/" + f.Key + "/issues"}
	for _, tok := range []string{u.Access, newAccess, other["accessToken"].(string)} {
		for _, p := range paths {
			require.Equal(t, http.StatusOK, h.Do("GET", p, nil, tok).Status, p)
		}
	}

	reuse := h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": u.Refresh}, "")
	require.Equal(t, http.StatusForbidden, reuse.Status, "%s", reuse.Body)
	for _, tok := range []string{u.Access, newAccess} {
		for _, p := range paths {
			r := h.Do("GET", p, nil, tok)
			require.Equal(t, http.StatusUnauthorized, r.Status, "%s: the revoked family's access token", p)
			require.NotContains(t, r.JSON(t), "reason", "revoked, not expired")
		}
	}
	for _, p := range paths {
		require.Equal(t, http.StatusOK, h.Do("GET", p, nil, other["accessToken"].(string)).Status, "%s: the other login", p)
	}
}

// TestLoginSessionEndsOnEveryReplica: logout, a password change and a sign-out
// everywhere (the user's own and an admin's) refuse the access tokens issued before
// them and close, within a second, the STOMP sessions they opened on both API servers
// sharing the database; the change goes through the second one. Others' sessions and
// the user's personal access tokens stay.
func TestLoginSessionEndsOnEveryReplica(t *testing.T) {
	t.Parallel()
	h1, h2, ws1, ws2 := stompReplicas(t)
	admin := h2.Register("Root")
	h2.MakeAdmin(admin)
	bystander := h2.Register("Bystander")
	stay := stompDial(t, ws1, bystander.Access)
	stompAlive(t, stay, "n")

	for _, tc := range []struct {
		name string
		end  func(u apitest.User) *apitest.Response
	}{
		{"logout", func(u apitest.User) *apitest.Response {
			return h2.Do("POST", "/api/v1/auth/logout", nil, u.Access)
		}},
		{"password change", func(u apitest.User) *apitest.Response {
			return h2.Do("POST", "/api/v1/me/password", map[string]any{"currentPassword": apitest.Password, "newPassword": "an entirely new one"}, u.Access)
		}},
		{"own sign-out everywhere", func(u apitest.User) *apitest.Response {
			return h2.Do("POST", "/api/v1/me/sign-out-everywhere", nil, u.Access)
		}},
		{"admin sign-out", func(u apitest.User) *apitest.Response {
			return h2.Do("POST", "/api/v1/admin/users/"+u.ID.String()+"/sign-out", nil, admin.Access)
		}},
	} {
		u := h2.Register("Ends")
		pat := h2.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "script", "scope": "READ_WRITE"}, u.Access)
		require.Equal(t, http.StatusCreated, pat.Status, "%s", pat.Body)
		second := h2.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, "").JSON(t)
		secondAccess := second["accessToken"].(string)
		// Sessions on both replicas, from both logins.
		c1 := stompDial(t, ws1, u.Access)
		stompAlive(t, c1, "n")
		c2 := stompDial(t, ws2, secondAccess)
		stompAlive(t, c2, "n")

		start := time.Now()
		r := tc.end(u)
		require.Equal(t, http.StatusNoContent, r.Status, "%s: %s", tc.name, r.Body)
		for _, c := range []*stomptest.Client{c1, c2} {
			stompEnded(t, c, start.Add(time.Second), sessionEnded)
		}
		t.Logf("%s: sessions closed on both replicas %v after the request started", tc.name, time.Since(start))
		for _, tok := range []string{u.Access, secondAccess} {
			require.Equal(t, http.StatusUnauthorized, h1.Do("GET", "/api/v1/auth/me", nil, tok).Status, "%s: access token refused", tc.name)
			stompRefused(t, stompConnect(t, ws1, tok), "invalid or expired")
		}
		require.Equal(t, http.StatusOK, h1.Do("GET", "/api/v1/auth/me", nil, pat.JSON(t)["plaintext"].(string)).Status,
			"%s: a personal access token is no login session", tc.name)
		for _, rt := range []string{u.Refresh, second["refreshToken"].(string)} {
			require.Equal(t, http.StatusForbidden, h1.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": rt}, "").Status, tc.name)
		}
		// A new login works at once and opens STOMP.
		password := apitest.Password
		if tc.name == "password change" {
			password = "an entirely new one"
		}
		again := h1.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": password}, "")
		require.Equal(t, http.StatusOK, again.Status, "%s: %s", tc.name, again.Body)
		fresh := again.JSON(t)["accessToken"].(string)
		require.Equal(t, http.StatusOK, h2.Do("GET", "/api/v1/auth/me", nil, fresh).Status, tc.name)
		stompAlive(t, stompDial(t, ws2, fresh), "n")
	}
	stompAlive(t, stay, "n2")
	require.Equal(t, 2, h2.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'SESSIONS_REVOKED'`),
		"both sign-outs everywhere are audited")
	require.Equal(t, 1, h2.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'SESSIONS_REVOKED'
		AND args->>'userId' = $1 AND args->>'level' = 'SECURITY'`, admin.ID.String()), "the admin is the actor of theirs")

	// The admin endpoint: admins only, known users only.
	r := h2.Do("POST", "/api/v1/admin/users/"+admin.ID.String()+"/sign-out", nil, bystander.Access)
	require.Equal(t, http.StatusForbidden, r.Status)
	require.Equal(t, "ADMIN_ONLY", r.JSON(t)["reason"])
	r = h2.Do("POST", "/api/v1/admin/users/"+uuid.NewString()+"/sign-out", nil, admin.Access)
	require.Equal(t, http.StatusNotFound, r.Status)
	require.Equal(t, "USER_NOT_FOUND", r.JSON(t)["reason"])
	require.Equal(t, http.StatusBadRequest, h2.Do("POST", "/api/v1/admin/users/not-a-uuid/sign-out", nil, admin.Access).Status)
	require.Equal(t, http.StatusUnauthorized, h2.Do("POST", "/api/v1/me/sign-out-everywhere", nil, "").Status)
}

// TestStompGraceIsBoundToTheLoginSession: an expired access token opens STOMP only while
// the refresh-token family that issued it is alive (rotations keep it so); once the
// family is revoked by a reuse, or its refresh tokens have all expired, or the user
// logged out, the token opens nothing, while an expired token of the user's other live
// login still does. A token without a family gets no grace, and the refusal of an
// expired token says TOKEN_EXPIRED.
func TestStompGraceIsBoundToTheLoginSession(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	ws, _ := stompServe(t, h)
	u := h.Register("Graceful")
	other := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, "").JSON(t)
	fam, otherFam := familyOf(t, h, u.Refresh), familyOf(t, h, other["refreshToken"].(string))
	now := time.Now()
	expiredOf := func(fam *uuid.UUID) string { return mintAccess(t, u.ID, fam, now, now.Add(-time.Hour)) }

	stompAccepted(t, stompConnect(t, ws, expiredOf(&fam)), "the session lives")
	rotated := h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": u.Refresh}, "")
	require.Equal(t, http.StatusOK, rotated.Status)
	stompAccepted(t, stompConnect(t, ws, expiredOf(&fam)), "a rotation keeps the session alive")
	live := stompDial(t, ws, expiredOf(&fam))
	stompAlive(t, live, "n")

	noFamily := stompConnect(t, ws, expiredOf(nil))
	e, err := noFamily.Expect("ERROR", 5*time.Second)
	require.NoError(t, err, "a token without a session gets no grace")
	require.Equal(t, "TOKEN_EXPIRED", e.Value("reason"))
	bad := stompConnect(t, ws, "not-a-jwt")
	e, err = bad.Expect("ERROR", 5*time.Second)
	require.NoError(t, err)
	require.Empty(t, e.Value("reason"))

	// Reuse revokes the family: its expired token opens nothing, and its open session
	// closes; the other login's expired token still opens.
	start := time.Now()
	require.Equal(t, http.StatusForbidden, h.Do("POST", "/api/v1/auth/refresh", map[string]any{"refreshToken": u.Refresh}, "").Status)
	stompEnded(t, live, start.Add(time.Second), sessionEnded)
	stompRefused(t, stompConnect(t, ws, expiredOf(&fam)), "invalid or expired")
	stompAccepted(t, stompConnect(t, ws, expiredOf(&otherFam)), "the other login lives")

	// A family whose refresh tokens all expired is no live session either.
	_, err = h.DB.Pool.Exec(context.Background(), "UPDATE refresh_tokens SET expires_at = now() - interval '1 second' WHERE family_id = $1", otherFam)
	require.NoError(t, err)
	stompRefused(t, stompConnect(t, ws, expiredOf(&otherFam)), "invalid or expired")

	// Logout ends a third login's session for its expired tokens too.
	third := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": u.Email, "password": apitest.Password}, "").JSON(t)
	thirdFam := familyOf(t, h, third["refreshToken"].(string))
	late := time.Now()
	thirdExpired := mintAccess(t, u.ID, &thirdFam, late, late.Add(-time.Minute))
	stompAccepted(t, stompConnect(t, ws, thirdExpired), "the third login lives")
	require.Equal(t, http.StatusNoContent, h.Do("POST", "/api/v1/auth/logout", nil, third["accessToken"].(string)).Status)
	stompRefused(t, stompConnect(t, ws, thirdExpired), "invalid or expired")
}
