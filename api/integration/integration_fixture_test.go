package integration_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// Real provider payloads, kept in testdata:
//   - github/push.json and github/pull_request_opened.json are the `push` example with one
//     commit and the first `pull_request` "opened" example of the npm package
//     @octokit/webhooks-examples 7.6.1 (api.github.com/index.json), saved unchanged.
//   - gitlab/push.json and gitlab/merge_request.json are the "Push events" and "Merge
//     request events" payload examples of GitLab's doc/user/project/integrations/
//     webhook_events.md, saved unchanged.
//
// Tests decode a payload to map[string]any, replace only the text members the parser
// reads (commit ids, messages and urls; pull/merge request titles and descriptions) with
// texts naming their project's issue keys, re-encode it and sign the re-encoded bytes.

// igCommit is one commit to put into a push payload.
type igCommit struct{ id, message, url string }

// igPayload reads a testdata payload as a map.
func igPayload(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

func igEncode(t *testing.T, m map[string]any) []byte {
	t.Helper()
	raw, err := json.Marshal(m)
	require.NoError(t, err)
	return raw
}

// igPush is the provider's push payload (file: github/push.json or gitlab/push.json)
// with its commits replaced by copies of its first commit carrying cs' id, message and url.
func igPush(t *testing.T, file string, cs ...igCommit) []byte {
	t.Helper()
	m := igPayload(t, file)
	orig := m["commits"].([]any)[0].(map[string]any)
	commits := make([]any, len(cs))
	for i, c := range cs {
		cp := map[string]any{}
		for k, v := range orig {
			cp[k] = v
		}
		cp["id"], cp["message"], cp["url"] = c.id, c.message, c.url
		commits[i] = cp
	}
	m["commits"] = commits
	return igEncode(t, m)
}

// igGitHubPR is the pull_request "opened" example with a new title and body.
func igGitHubPR(t *testing.T, title, body string) []byte {
	t.Helper()
	m := igPayload(t, "github/pull_request_opened.json")
	pr := m["pull_request"].(map[string]any)
	pr["title"], pr["body"] = title, body
	return igEncode(t, m)
}

// igGitLabMR is the merge request example with a new title and description.
func igGitLabMR(t *testing.T, title, description string) []byte {
	t.Helper()
	m := igPayload(t, "gitlab/merge_request.json")
	attrs := m["object_attributes"].(map[string]any)
	attrs["title"], attrs["description"] = title, description
	return igEncode(t, m)
}

// igSign is GitHub's X-Hub-Signature-256 of body.
func igSign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// igCreate connects the project to provider as token and returns the 201 reply.
func igCreate(t *testing.T, h *apitest.Harness, token, key, provider string) map[string]any {
	t.Helper()
	r := h.Do("POST", "/api/v1/projects/"+key+"/integrations", map[string]any{"provider": provider}, token)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// igGitHub posts body to the GitHub webhook of key; headers are name, value pairs.
func igGitHub(h *apitest.Harness, key string, body []byte, headers ...string) *apitest.Response {
	return h.Do("POST", "/api/v1/integrations/github/"+key+"/webhook", body, "", headers...)
}

// igGitLab posts body to the GitLab webhook of key.
func igGitLab(h *apitest.Harness, key string, body []byte, headers ...string) *apitest.Response {
	return h.Do("POST", "/api/v1/integrations/gitlab/"+key+"/webhook", body, "", headers...)
}

// igOK asserts the exact acknowledgement body.
func igOK(t *testing.T, r *apitest.Response) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.JSONEq(t, `{"status":"ok"}`, string(r.Body))
}

// igRefused asserts the incoming events' 401 body
// (docs/api-conventions.md#incoming-provider-events): only an "error" message, none of
// the usual error body's members.
func igRefused(t *testing.T, r *apitest.Response) {
	t.Helper()
	require.Equal(t, http.StatusUnauthorized, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.Len(t, m, 1, "%s", r.Body)
	require.NotEmpty(t, m["error"])
}

// igEvents counts the stored incoming events of a project.
func igEvents(h *apitest.Harness, projectID any) int {
	return h.Count("SELECT count(*) FROM incoming_events WHERE project_id = $1", projectID)
}
