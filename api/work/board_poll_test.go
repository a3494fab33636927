package work_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/auth"
)

// boardPollFixture is a sprint project whose active sprint holds three issues, on
// harness h.
func boardPollFixture(t *testing.T, h *apitest.Harness) (*apitest.SprintProject, []string) {
	t.Helper()
	f := apitest.NewSprintProject(t, h)
	sp := f.NewSprint(t, map[string]any{"name": "Polled"})["id"].(string)
	keys := make([]string, 3)
	for i := range keys {
		keys[i] = f.Create(t, map[string]any{"title": "Polled " + string(rune('a'+i)), "sprintId": sp})["key"].(string)
	}
	f.Start(t, sp)
	return f, keys
}

// boardETag reads the board as token and answers its ETag (200 wanted).
func boardETag(t *testing.T, h *apitest.Harness, f *apitest.SprintProject, token string) string {
	t.Helper()
	r := h.Do("GET", f.Path("/board"), nil, token)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	tag := r.Header.Get("ETag")
	require.NotEmpty(t, tag)
	return tag
}

// pollBoard is GET /board as token with If-None-Match etag.
func pollBoard(h *apitest.Harness, f *apitest.SprintProject, token, etag string) *apitest.Response {
	return h.Do("GET", f.Path("/board"), nil, token, "If-None-Match", etag)
}

// TestBoardPollStatements pins the cost of polling an unchanged board: with an access
// token, a poll answered 304, and a read served from the board cache, are one statement
// (the project access with the credential's user row, its login session and the board's
// head). A personal access token is checked before the project, as on every route:
// three. A per-credential rate limit (TW_API_RATE_LIMIT) adds its own statement.
func TestBoardPollStatements(t *testing.T) {
	t.Parallel()
	log := &statementLog{}
	h := apitest.TracedHarness(t, log)
	f, _ := boardPollFixture(t, h)
	tag := boardETag(t, h, f, f.Member.Access)

	var r *apitest.Response
	stmts := log.during(func() { r = pollBoard(h, f, f.Member.Access, tag) })
	require.Equal(t, http.StatusNotModified, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	require.Equal(t, tag, r.Header.Get("ETag"))
	require.Len(t, stmts, 1, "%q", stmts)
	require.True(t, strings.HasPrefix(stmts[0], "SELECT p.id, p.key"), "the access statement: %s", stmts[0])
	require.Contains(t, stmts[0], "FROM refresh_tokens", "with the login session")
	require.Contains(t, stmts[0], "board_names_revision", "with the board's head")

	stmts = log.during(func() { r = h.Do("GET", f.Path("/board"), nil, f.Viewer.Access) })
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, tag, r.Header.Get("ETag"), "another reader, the same board")
	require.Len(t, stmts, 1, "a cached board read: %q", stmts)

	pat := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "poller"}, f.Member.Access).JSON(t)["plaintext"].(string)
	require.Equal(t, http.StatusNotModified, pollBoard(h, f, pat, tag).Status) // records lastUsedAt
	stmts = log.during(func() { r = pollBoard(h, f, pat, tag) })
	require.Equal(t, http.StatusNotModified, r.Status)
	require.Len(t, stmts, 1, "a personal access token: its row read with the project and the board head: %q", stmts)
	require.Contains(t, stmts[0], "FROM personal_access_tokens", "with the token's row")
	require.Contains(t, stmts[0], "board_names_revision", "the board's head in the access statement")

	key := h.Do("POST", f.Path("/api-keys"), map[string]any{"name": "poller"}, f.Owner.Access).JSON(t)
	apiKey, _ := key["plaintext"].(string)
	require.NotEmpty(t, apiKey, "%v", key)
	require.Equal(t, http.StatusNotModified, pollBoard(h, f, apiKey, tag).Status) // records lastUsedAt
	stmts = log.during(func() { r = pollBoard(h, f, apiKey, tag) })
	require.Equal(t, http.StatusNotModified, r.Status)
	require.Len(t, stmts, 1, "an API key: %q", stmts)
	require.Contains(t, stmts[0], "FROM project_api_keys")

	limited := apitest.New(t, apitest.Options{DB: h.DB, Configure: func(s *api.Settings) { s.APIRateLimit = 1000 }})
	require.Equal(t, http.StatusNotModified, pollBoard(limited, f, f.Member.Access, tag).Status) // fills its board cache
	stmts = log.during(func() { r = pollBoard(limited, f, f.Member.Access, tag) })
	require.Equal(t, http.StatusNotModified, r.Status, "%s", r.Body)
	require.Len(t, stmts, 2, "rate limit, then the access statement: %q", stmts)
	require.Contains(t, stmts[0], "rate_limit_take")
	require.NotEmpty(t, r.Header.Get("RateLimit"), "the limit still counts a poll")
}

// TestBoardPollRefusedLikeARead: a poll with an ETag the caller once had is refused
// exactly as the same read without If-None-Match once the caller may no longer read
// the board: a removed member, a disabled or deleted user, signed-out tokens, an ended
// login session, a revoked personal access token, a deleted API key. A valid poll is
// 304 on any replica, and a change makes it 200 with a new ETag.
func TestBoardPollRefusedLikeARead(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	replica := apitest.New(t, apitest.Options{DB: h.DB})
	f, keys := boardPollFixture(t, h)
	tag := boardETag(t, h, f, f.Owner.Access)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := h.DB.Pool.Exec(context.Background(), sql, args...)
		require.NoError(t, err)
	}
	// reader is a new VIEWER of the project whose poll is 304 now.
	reader := func(name string) apitest.User {
		t.Helper()
		u := h.Register(name)
		f.AddMember(t, u, "VIEWER")
		require.Equal(t, http.StatusNotModified, pollBoard(h, f, u.Access, tag).Status, name)
		return u
	}
	// refused requires the poll and the plain read as token to be the same problem.
	refused := func(token string, status int, code string, reason apitest.ReasonCheck) {
		t.Helper()
		apitest.RequireProblem(t, pollBoard(h, f, token, tag), status, code, reason)
		apitest.RequireProblem(t, h.Do("GET", f.Path("/board"), nil, token), status, code, reason)
	}
	unauthorized := func(token string) {
		t.Helper()
		refused(token, http.StatusUnauthorized, "UNAUTHORIZED", apitest.NoReason)
	}

	removed := reader("Removed")
	r := h.Do("DELETE", f.Path("/members/"+removed.ID.String()), nil, f.Owner.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	refused(removed.Access, http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	refused(f.Outsider.Access, http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	unauthorized("not-a-token")
	unauthorized("")

	nosuch := "/api/v1/projects/NOSUCH/board"
	apitest.RequireProblem(t, h.Do("GET", nosuch, nil, f.Viewer.Access, "If-None-Match", tag), http.StatusNotFound, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))

	disabled := reader("Disabled")
	exec("UPDATE users SET active = false WHERE id = $1", disabled.ID)
	unauthorized(disabled.Access)
	apitest.RequireProblem(t, h.Do("GET", nosuch, nil, disabled.Access, "If-None-Match", tag), http.StatusUnauthorized, "UNAUTHORIZED", apitest.NoReason)
	deleted := reader("Deleted")
	exec("UPDATE users SET deleted_at = now() WHERE id = $1", deleted.ID)
	unauthorized(deleted.Access)

	signedOut := reader("SignedOut")
	require.Equal(t, http.StatusNoContent, h.Do("POST", "/api/v1/me/sign-out-everywhere", nil, signedOut.Access).Status)
	unauthorized(signedOut.Access)

	loggedOut := reader("LoggedOut")
	require.Equal(t, http.StatusNoContent, h.Do("POST", "/api/v1/auth/logout", nil, loggedOut.Access).Status)
	unauthorized(loggedOut.Access)

	// A login session that ends alone (its refresh tokens revoked, as on a reused refresh
	// token) refuses its access tokens; the user's other login still polls.
	twice := reader("Twice")
	login := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": twice.Email, "password": apitest.Password}, "").JSON(t)
	second := login["accessToken"].(string)
	require.Equal(t, http.StatusNotModified, pollBoard(h, f, second, tag).Status)
	exec(`UPDATE refresh_tokens SET revoked = true
		WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)`, auth.HashToken(login["refreshToken"].(string)))
	unauthorized(second)
	require.Equal(t, http.StatusNotModified, pollBoard(h, f, twice.Access, tag).Status)

	patOwner := reader("PatOwner")
	created := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "poller"}, patOwner.Access).JSON(t)
	pat := created["plaintext"].(string)
	require.Equal(t, http.StatusNotModified, pollBoard(h, f, pat, tag).Status)
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", "/api/v1/me/tokens/"+created["id"].(string), nil, patOwner.Access).Status)
	unauthorized(pat)

	key := h.Do("POST", f.Path("/api-keys"), map[string]any{"name": "wallboard"}, f.Owner.Access).JSON(t)
	plain := key["plaintext"].(string)
	require.Equal(t, http.StatusNotModified, pollBoard(h, f, plain, tag).Status)
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", f.Path("/api-keys/"+key["id"].(string)), nil, f.Owner.Access).Status)
	unauthorized(plain)

	// Valid polls are 304 on both replicas (the second has no board cached yet) until
	// the board changes; then 200 with a new ETag, which is 304 again everywhere.
	require.Equal(t, http.StatusNotModified, pollBoard(replica, f, f.Viewer.Access, tag).Status)
	require.Equal(t, http.StatusOK, h.Do("PATCH", f.Path("/board/move"), map[string]any{"issueId": keys[1], "newStatusId": f.Done}, f.Member.Access).Status)
	for _, srv := range []*apitest.Harness{h, replica} {
		r := pollBoard(srv, f, f.Viewer.Access, tag)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.NotEqual(t, tag, r.Header.Get("ETag"))
		require.Equal(t, http.StatusNotModified, pollBoard(srv, f, f.Viewer.Access, r.Header.Get("ETag")).Status)
	}
}
