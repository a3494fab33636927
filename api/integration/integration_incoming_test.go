package integration_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/integration"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/workers"
)

// igRefs lists an issue's refs through the API as the viewer.
func igRefs(t *testing.T, f *apitest.Project, key string) []map[string]any {
	t.Helper()
	r := f.H.Do("GET", f.Path("/issues/"+key+"/refs"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var out []map[string]any
	for _, v := range r.Array(t) {
		out = append(out, v.(map[string]any))
	}
	return out
}

// igProcessed waits until every stored event of the project has been parsed.
func igProcessed(t *testing.T, h *apitest.Harness, f *apitest.Project, want int) {
	t.Helper()
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM incoming_events WHERE project_id = $1 AND processed_at IS NOT NULL", f.ProjectID) == want
	}, "incoming events processed")
}

func TestIntegrationGitHubEventsBecomeRefs(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{}) // workers run: a database of its own
	f := apitest.NewProject(t, h)
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE audit_config SET enabled = true WHERE level = 'WRITE'")
	require.NoError(t, err)
	one, two := f.Create(t, map[string]any{"title": "One"})["key"].(string), f.Create(t, map[string]any{"title": "Two"})["key"].(string)
	other := apitest.NewProject(t, h)
	otherKey := other.Create(t, map[string]any{"title": "Elsewhere"})["key"].(string)
	igCreate(t, h, other.Owner.Access, other.Key, "github")

	created := igCreate(t, h, f.Owner.Access, f.Key, "github")
	secret := created["plaintextSecret"].(string)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = $1 AND args->>'resourceId' = $2",
		integration.ActionCreated, created["id"]))

	long := "Refs " + two + " and " + one + ": " + strings.Repeat("x", 150)
	push := igPush(t, "github/push.json",
		igCommit{"1111111111111111111111111111111111111111", one + " fix login; " + otherKey + " and " + f.Key + "-999 are not ours", "https://github.com/acme/app/commit/1111"},
		igCommit{"2222222222222222222222222222222222222222", long, "https://github.com/acme/app/commit/2222"},
		igCommit{"3333333333333333333333333333333333333333", "no key: x" + one + " " + strings.ToLower(one), "https://github.com/acme/app/commit/3333"},
	)
	r := igGitHub(h, f.Key, push, "X-Hub-Signature-256", igSign(secret, push), "X-GitHub-Event", "push")
	igOK(t, r)

	// Stored byte for byte with its job, in one transaction; nothing parsed yet.
	var eventID string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		"SELECT id::text FROM incoming_events WHERE project_id = $1 AND provider = 'GITHUB' AND event_name = 'push' AND payload = $2 AND processed_at IS NULL",
		f.ProjectID, push).Scan(&eventID))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job AS j, incoming_events AS e WHERE e.id = $1
		AND j.kind = 'integration.event' AND j.queue = $2 AND j.args->>'eventId' = $1::text AND j.args->>'projectId' = $3
		AND j.xmin = e.xmin`, eventID, jobs.QueueIntegrations, f.ProjectID.String()), "event row and job share one transaction")
	require.Equal(t, 0, h.Count("SELECT count(*) FROM issue_refs"))

	// The workers parse it. Events are posted one after the other from here on, so the
	// refs' order (creation order) is known.
	h.StartWorkers()
	igProcessed(t, h, f, 1)

	// A pull request without X-GitHub-Event: the pull_request member makes it one.
	pr := igGitHubPR(t, two+": Update the README", "Closes "+one+" and "+otherKey+".")
	igOK(t, igGitHub(h, f.Key, pr, "X-Hub-Signature-256", igSign(secret, pr)))
	igProcessed(t, h, f, 2)
	// Events that are neither push nor pull_request are stored and ignored.
	ping := []byte(`{"zen":"Design for failure. ` + one + `","hook_id":1}`)
	igOK(t, igGitHub(h, f.Key, ping, "X-Hub-Signature-256", igSign(secret, ping), "X-GitHub-Event", "ping"))
	igProcessed(t, h, f, 3)
	require.Equal(t, 3, igEvents(h, f.ProjectID))

	refsOne := igRefs(t, f, one)
	require.Len(t, refsOne, 3, "%v", refsOne)
	require.Equal(t, "COMMIT", refsOne[0]["refType"])
	require.Equal(t, "GITHUB", refsOne[0]["provider"])
	require.Equal(t, "1111111111111111111111111111111111111111", refsOne[0]["externalId"])
	require.Equal(t, "https://github.com/acme/app/commit/1111", refsOne[0]["url"])
	require.Equal(t, one+" fix login; "+otherKey+" and "+f.Key+"-999 are not ours", refsOne[0]["title"])
	require.Equal(t, "2222222222222222222222222222222222222222", refsOne[1]["externalId"])
	require.Equal(t, long[:100], refsOne[1]["title"], "first 100 characters of the message")
	require.Equal(t, "PR", refsOne[2]["refType"])
	require.Equal(t, "2", refsOne[2]["externalId"], "the example's pull request number")
	require.Equal(t, "https://github.com/Codertocat/Hello-World/pull/2", refsOne[2]["url"])
	require.Equal(t, two+": Update the README", refsOne[2]["title"])
	for _, ref := range refsOne {
		require.NotEmpty(t, ref["id"])
		require.NotEmpty(t, ref["createdAt"])
	}

	refsTwo := igRefs(t, f, two)
	require.Len(t, refsTwo, 2)
	require.Equal(t, "2222222222222222222222222222222222222222", refsTwo[0]["externalId"])
	require.Equal(t, "PR", refsTwo[1]["refType"])

	// Other projects' keys and unknown numbers make nothing.
	require.Equal(t, 5, h.Count("SELECT count(*) FROM issue_refs"))
	require.Empty(t, igRefs(t, other, otherKey))

	// The single-issue GET and the PATCH reply carry the same list; lists keep [].
	iss := f.Get(t, one)
	require.Len(t, iss["refs"], 3)
	require.Equal(t, refsOne[0]["id"], iss["refs"].([]any)[0].(map[string]any)["id"])
	require.Len(t, f.Patch(t, one, map[string]any{"priority": "HIGH"})["refs"], 3)
	page := f.H.Do("GET", f.Path("/issues"), nil, f.Viewer.Access).JSON(t)
	for _, it := range page["content"].([]any) {
		require.Equal(t, []any{}, it.(map[string]any)["refs"])
	}

	// The same payloads again add nothing.
	igOK(t, igGitHub(h, f.Key, push, "X-Hub-Signature-256", igSign(secret, push), "X-GitHub-Event", "push"))
	igOK(t, igGitHub(h, f.Key, pr, "X-Hub-Signature-256", igSign(secret, pr), "X-GitHub-Event", "pull_request"))
	igProcessed(t, h, f, 5)
	require.Equal(t, 5, h.Count("SELECT count(*) FROM issue_refs"))
	require.Len(t, igRefs(t, f, one), 3)

	// Deleting an issue takes its refs along.
	require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.Path("/issues/"+two), nil, f.Owner.Access).Status)
	require.Equal(t, 3, h.Count("SELECT count(*) FROM issue_refs"))

	// Retention: processed payloads older than the retention go, the refs stay. Run
	// through the cleanup worker, as the periodic job does.
	_, err = h.DB.Pool.Exec(context.Background(), "UPDATE incoming_events SET processed_at = now() - interval '31 days' WHERE id = $1", eventID)
	require.NoError(t, err)
	_, err = h.DB.Pool.Exec(context.Background(), `INSERT INTO incoming_events (project_id, provider, payload, received_at)
		VALUES ($1, 'GITHUB', '{}', now() - interval '40 days')`, f.ProjectID)
	require.NoError(t, err)
	w := &workers.IncomingEventCleanupWorker{DB: h.DB.Bun}
	require.NoError(t, w.Work(context.Background(), &river.Job[jobs.IncomingEventCleanup]{Args: jobs.IncomingEventCleanup{Retention: 30 * 24 * time.Hour}}))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM incoming_events WHERE id = $1", eventID))
	require.Equal(t, 5, igEvents(h, f.ProjectID), "newer and unprocessed payloads stay")
	require.Equal(t, 3, h.Count("SELECT count(*) FROM issue_refs"))
}

func TestIntegrationGitLabEventsBecomeRefs(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	one, two := f.Create(t, map[string]any{"title": "One"})["key"].(string), f.Create(t, map[string]any{"title": "Two"})["key"].(string)
	token := igCreate(t, h, f.Owner.Access, f.Key, "gitlab")["plaintextSecret"].(string)

	push := igPush(t, "gitlab/push.json",
		igCommit{"b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327", "Update Catalan translation (" + one + ")\n\nSee " + two, "http://example.com/mike/diaspora/commit/b6568db1"},
		igCommit{"da1560886d4f094c3e6c9ef40349f7d38b5d27d7", "fixed readme", "http://example.com/mike/diaspora/commit/da156088"},
	)
	igOK(t, igGitLab(h, f.Key, push, "X-Gitlab-Token", token, "X-Gitlab-Event", "Push Hook"))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM incoming_events AS e JOIN river_job AS j ON j.args->>'eventId' = e.id::text
		WHERE e.project_id = $1 AND e.provider = 'GITLAB' AND e.event_name = 'Push Hook' AND e.payload = $2
		AND e.processed_at IS NULL AND j.kind = 'integration.event' AND j.xmin = e.xmin`, f.ProjectID, push))

	// Wrong or missing token: 401 with the providers' {"error"} body, nothing stored.
	igRefused(t, igGitLab(h, f.Key, push, "X-Gitlab-Token", token+"x"))
	igRefused(t, igGitLab(h, f.Key, push))
	igRefused(t, igGitLab(h, f.Key, push, "X-Gitlab-Token", strings.ToUpper(token)))
	require.Equal(t, "Missing or invalid X-Gitlab-Token.", igGitLab(h, f.Key, push).JSON(t)["error"])
	require.Equal(t, 1, igEvents(h, f.ProjectID))

	h.StartWorkers()
	igProcessed(t, h, f, 1)
	mr := igGitLabMR(t, "MS-Viewport for "+one, "Also touches "+two+" and "+f.Key+"-4242.")
	igOK(t, igGitLab(h, f.Key, mr, "X-Gitlab-Token", token, "X-Gitlab-Event", "Merge Request Hook"))
	igProcessed(t, h, f, 2)
	refs := igRefs(t, f, one)
	require.Len(t, refs, 2)
	require.Equal(t, map[string]any{"id": refs[0]["id"], "provider": "GITLAB", "refType": "COMMIT",
		"externalId": "b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327", "url": "http://example.com/mike/diaspora/commit/b6568db1",
		"title": "Update Catalan translation (" + one + ")\n\nSee " + two, "createdAt": refs[0]["createdAt"]}, refs[0])
	require.Equal(t, map[string]any{"id": refs[1]["id"], "provider": "GITLAB", "refType": "PR", "externalId": "1",
		"url": "http://example.com/diaspora/merge_requests/1", "title": "MS-Viewport for " + one, "createdAt": refs[1]["createdAt"]}, refs[1])
	require.Len(t, igRefs(t, f, two), 2)
	require.Equal(t, 4, h.Count("SELECT count(*) FROM issue_refs"))

	// Redelivered: no duplicates.
	igOK(t, igGitLab(h, f.Key, push, "X-Gitlab-Token", token))
	igProcessed(t, h, f, 3)
	require.Equal(t, 4, h.Count("SELECT count(*) FROM issue_refs"))
}

func TestIntegrationIncomingRefusals(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)
	secret := igCreate(t, h, f.Owner.Access, f.Key, "github")["plaintextSecret"].(string)
	other := apitest.NewProject(t, h)
	otherSecret := igCreate(t, h, other.Owner.Access, other.Key, "github")["plaintextSecret"].(string)
	body := igPush(t, "github/push.json", igCommit{"abc", "nothing", "u"})
	sig := igSign(secret, body)

	// Wrong, missing, malformed or foreign signatures: 401, the {"error"} body, nothing
	// stored.
	for name, headers := range map[string][]string{
		"missing":       nil,
		"empty":         {"X-Hub-Signature-256", ""},
		"other secret":  {"X-Hub-Signature-256", igSign(otherSecret, body)},
		"other body":    {"X-Hub-Signature-256", igSign(secret, append([]byte(" "), body...))},
		"no prefix":     {"X-Hub-Signature-256", strings.TrimPrefix(sig, "sha256=")},
		"sha1":          {"X-Hub-Signature-256", "sha1=" + strings.TrimPrefix(sig, "sha256=")},
		"uppercase hex": {"X-Hub-Signature-256", "sha256=" + strings.ToUpper(strings.TrimPrefix(sig, "sha256="))},
		"old header":    {"X-Hub-Signature", sig},
	} {
		r := igGitHub(h, f.Key, body, headers...)
		igRefused(t, r)
		require.NotContains(t, string(r.Body), "code", name)
	}
	require.Equal(t, "Missing or invalid X-Hub-Signature-256 signature.", igGitHub(h, f.Key, body).JSON(t)["error"])
	require.Equal(t, "Fehlende oder ungültige Signatur X-Hub-Signature-256.", igGitHub(h, f.Key, body, "Accept-Language", "de").JSON(t)["error"])
	require.Equal(t, 0, igEvents(h, f.ProjectID))

	// A bearer token changes nothing: the signature is the only credential.
	igRefused(t, h.Do("POST", "/api/v1/integrations/github/"+f.Key+"/webhook", body, f.Owner.Access))

	// Invalid JSON after a valid signature: 400 with the usual error body, nothing stored.
	for _, bad := range []string{"{", "", "[1,2]", "null", `{"a":1} trailing`} {
		r := igGitHub(h, f.Key, []byte(bad), "X-Hub-Signature-256", igSign(secret, []byte(bad)))
		apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("MALFORMED_JSON"))
	}
	require.Equal(t, 0, igEvents(h, f.ProjectID))

	// Unknown project, or no integration for the provider: 200 ok whatever the
	// credential, nothing stored, no job.
	jobsBefore := h.Count("SELECT count(*) FROM river_job WHERE kind = 'integration.event'")
	igOK(t, igGitHub(h, "NOSUCH1", body, "X-Hub-Signature-256", sig))
	igOK(t, igGitHub(h, "NOSUCH1", body))
	igOK(t, igGitHub(h, "NOSUCH1", []byte("{")))
	igOK(t, igGitLab(h, f.Key, body, "X-Gitlab-Token", secret))
	igOK(t, igGitLab(h, f.Key, body))
	require.Equal(t, 0, igEvents(h, f.ProjectID))
	require.Equal(t, jobsBefore, h.Count("SELECT count(*) FROM river_job WHERE kind = 'integration.event'"))

	// The correct signature is accepted; a deleted integration stops accepting.
	igOK(t, igGitHub(h, f.Key, body, "X-Hub-Signature-256", sig))
	require.Equal(t, 1, igEvents(h, f.ProjectID))
	id := h.Do("GET", f.Path("/integrations"), nil, f.Owner.Access).Array(t)[0].(map[string]any)["id"].(string)
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", f.Path("/integrations/"+id), nil, f.Owner.Access).Status)
	igOK(t, igGitHub(h, f.Key, body, "X-Hub-Signature-256", sig))
	require.Equal(t, 1, igEvents(h, f.ProjectID))
}
