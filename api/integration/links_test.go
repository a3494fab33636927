package integration_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// notHTTPLinks are links a browser would run, load or resolve elsewhere than an http(s)
// page: none may be stored.
var notHTTPLinks = []string{
	"javascript:alert(document.cookie)", "JavaScript:alert(1)", "java\tscript:alert(1)", " javascript:alert(1)",
	"data:image/svg+xml;base64,PHN2Zz48c2NyaXB0PmFsZXJ0KDEpPC9zY3JpcHQ+PC9zdmc+", "vbscript:msgbox(1)",
	"file:///etc/passwd", "//evil.example/a.png", "/a.png", "https://user:pw@evil.example/a.png", `https:\\evil.example`,
	"https://", "avatar.png",
}

// TestStoredLinksAreHTTPOnly: PATCH /me refuses an avatarUrl that is no absolute http(s)
// URL with 400 VALIDATION_ERROR naming the member, and keeps the stored one; an
// integration's repoUrl follows the same rule.
func TestStoredLinksAreHTTPOnly(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Linker")
	good := "https://cdn.example.com/avatars/linker.png"
	r := h.Do("PATCH", "/api/v1/me", map[string]any{"avatarUrl": good}, u.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, good, r.JSON(t)["avatarUrl"])

	for _, link := range notHTTPLinks {
		r := h.Do("PATCH", "/api/v1/me", map[string]any{"displayName": "Changed", "avatarUrl": link}, u.Access)
		m := apitest.RequireProblem(t, r, http.StatusBadRequest, "VALIDATION_ERROR", apitest.NoReason)
		require.Contains(t, m["details"], "avatarUrl", "%q: %s", link, r.Body)
		require.Equal(t, "URL", m["errors"].([]any)[0].(map[string]any)["code"])
	}
	me := h.Do("GET", "/api/v1/auth/me", nil, u.Access).JSON(t)
	require.Equal(t, good, me["avatarUrl"], "nothing was stored")
	require.Equal(t, "Linker", me["displayName"], "nor the rest of the refused change")
	require.Equal(t, http.StatusOK, h.Do("PATCH", "/api/v1/me", map[string]any{"avatarUrl": ""}, u.Access).Status, "empty still clears")

	f := apitest.NewProject(t, h)
	for _, link := range []string{"javascript:alert(1)", "git@github.com:acme/app.git", "ssh://git@github.com/acme/app"} {
		r := h.Do("POST", f.Path("/integrations"), map[string]any{"provider": "github", "repoUrl": link}, f.Owner.Access)
		m := apitest.RequireProblem(t, r, http.StatusBadRequest, "VALIDATION_ERROR", apitest.NoReason)
		require.Contains(t, m["details"], "repoUrl", "%q", link)
	}
	require.Equal(t, 0, h.Count("SELECT count(*) FROM project_integrations WHERE project_id = $1", f.ProjectID))
}

// TestProviderRefsWithoutAnHTTPLinkAreDropped: a signed push whose commits carry
// javascript: and other addresses stores only the reference with an http(s) one.
func TestProviderRefsWithoutAnHTTPLinkAreDropped(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{}) // workers run: a database of its own
	f := apitest.NewProject(t, h)
	key := f.Create(t, map[string]any{"title": "Linked"})["key"].(string)
	secret := igCreate(t, h, f.Owner.Access, f.Key, "github")["plaintextSecret"].(string)
	var commits []igCommit
	for i, link := range append([]string{"https://github.com/acme/app/commit/ffff"}, notHTTPLinks...) {
		commits = append(commits, igCommit{id: string(rune('a'+i)) + "000000000000000000000000000000000000000", message: "Fix " + key, url: link})
	}
	push := igPush(t, "github/push.json", commits...)
	igOK(t, igGitHub(h, f.Key, push, "X-Hub-Signature-256", igSign(secret, push), "X-GitHub-Event", "push"))
	h.StartWorkers()
	igProcessed(t, h, f, 1)
	refs := igRefs(t, f, key)
	require.Len(t, refs, 1)
	require.Equal(t, "https://github.com/acme/app/commit/ffff", refs[0]["url"])
	require.Equal(t, 1, h.Count("SELECT count(*) FROM issue_refs"))
}
