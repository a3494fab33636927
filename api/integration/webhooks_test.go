package integration_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestWebhookCRUD(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	apitest.SetAuditLevel(t, h, "WRITE", true)
	base := f.Path("/webhooks")

	// Created with a generated secret, shown once, nested under webhook.
	r := h.Do("POST", base, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.created", "issue.created", "issue.deleted"}}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m := r.JSON(t)
	wh := m["webhook"].(map[string]any)
	secret := m["plaintextSecret"].(string)
	require.Len(t, secret, 52)
	require.Equal(t, apitest.PublicWebhookURL, wh["url"])
	require.Equal(t, []any{"issue.created", "issue.deleted"}, wh["events"], "repeats count once")
	require.Equal(t, true, wh["enabled"])
	require.Equal(t, f.ProjectID.String(), wh["projectId"])
	require.NotEmpty(t, wh["createdAt"])
	require.NotContains(t, wh, "secret")
	id := wh["id"].(string)

	// A given secret is kept; a blank one is generated; enabled may start false.
	require.Equal(t, "s3cret", whCreateSecret(t, h, f.Key, f.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.updated"}, "secret": "s3cret"}))
	require.Len(t, whCreateSecret(t, h, f.Key, f.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.updated"}, "secret": "   "}), 52)
	off, _ := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"sprint.started"}, "enabled": false})
	require.Equal(t, false, off["enabled"])

	// Listed for any member, never with a secret.
	r = h.Do("GET", base, nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	list := r.Array(t)
	require.Len(t, list, 4)
	require.Equal(t, id, list[0].(map[string]any)["id"])
	require.NotContains(t, string(r.Body), secret)
	require.NotContains(t, string(r.Body), "s3cret")

	// Update: absent members stay.
	r = h.Do("PUT", base+"/"+id, map[string]any{"events": []string{"issue.assigned"}, "enabled": false}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	up := r.JSON(t)
	require.Equal(t, apitest.PublicWebhookURL, up["url"])
	require.Equal(t, []any{"issue.assigned"}, up["events"])
	require.Equal(t, false, up["enabled"])
	require.NotContains(t, string(r.Body), secret)
	r = h.Do("PUT", base+"/"+id, map[string]any{"url": "https://[3ffe::11]/other"}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "https://[3ffe::11]/other", r.JSON(t)["url"])
	require.Equal(t, []any{"issue.assigned"}, r.JSON(t)["events"])

	// Validation.
	long := "https://[3ffe::10]/" + strings.Repeat("a", 2048)
	for _, c := range []struct {
		body           any
		code, reason   string
		field          string
		method, target string
	}{
		{map[string]any{"events": []string{"issue.created"}}, "BAD_REQUEST", "MISSING_FIELD", "", "POST", base},
		{map[string]any{"url": apitest.PublicWebhookURL}, "BAD_REQUEST", "MISSING_FIELD", "", "POST", base},
		{map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.exploded"}}, "BAD_REQUEST", "UNKNOWN_EVENT", "", "POST", base},
		{map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"ping"}}, "BAD_REQUEST", "UNKNOWN_EVENT", "", "POST", base},
		{map[string]any{"url": apitest.PublicWebhookURL, "events": "issue.created"}, "BAD_REQUEST", "WRONG_TYPE", "", "POST", base},
		{map[string]any{"url": apitest.PublicWebhookURL, "events": []string{}}, "VALIDATION_ERROR", "", "events", "POST", base},
		{map[string]any{"url": long, "events": []string{"issue.created"}}, "VALIDATION_ERROR", "", "url", "POST", base},
		{map[string]any{"url": "  ", "events": []string{"issue.created"}}, "VALIDATION_ERROR", "", "url", "POST", base},
		{map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.created"}, "secret": strings.Repeat("s", 65)}, "VALIDATION_ERROR", "", "secret", "POST", base},
		{map[string]any{"url": "ftp://[3ffe::10]/x", "events": []string{"issue.created"}}, "BAD_REQUEST", "WEBHOOK_URL_REJECTED", "", "POST", base},
		{map[string]any{"url": "no url at all", "events": []string{"issue.created"}}, "BAD_REQUEST", "WEBHOOK_URL_REJECTED", "", "POST", base},
		{map[string]any{"url": "http:///path", "events": []string{"issue.created"}}, "BAD_REQUEST", "WEBHOOK_URL_REJECTED", "", "POST", base},
		{"[]", "BAD_REQUEST", "MALFORMED_JSON", "", "POST", base},
		{map[string]any{"events": []string{}}, "VALIDATION_ERROR", "", "events", "PUT", base + "/" + id},
		{map[string]any{"url": "http://10.1.2.3/"}, "BAD_REQUEST", "WEBHOOK_URL_REJECTED", "", "PUT", base + "/" + id},
		{map[string]any{"url": "http://[64:ff9b::a9fe:a9fe]/latest"}, "BAD_REQUEST", "WEBHOOK_URL_REJECTED", "", "PUT", base + "/" + id},
		{map[string]any{"url": "http://0x7f000001:8080/"}, "BAD_REQUEST", "WEBHOOK_URL_REJECTED", "", "PUT", base + "/" + id},
		{map[string]any{"url": "http://100.100.100.200/"}, "BAD_REQUEST", "WEBHOOK_URL_REJECTED", "", "PUT", base + "/" + id},
		{map[string]any{"url": "http://203.0.113.10/", "events": []string{"issue.created"}}, "BAD_REQUEST", "WEBHOOK_URL_REJECTED", "", "POST", base},
		{map[string]any{"enabled": true}, "BAD_REQUEST", "INVALID_UUID", "", "PUT", base + "/nope"},
	} {
		r := h.Do(c.method, c.target, c.body, f.Owner.Access)
		m := apitest.RequireProblem(t, r, 400, c.code, apitest.ReasonOrNone(c.reason))
		if c.field != "" {
			require.Contains(t, m["details"], c.field, "%s", r.Body)
		}
	}
	r = h.Do("GET", base+"/"+id+"/deliveries", nil, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "https://[3ffe::11]/other", h.Do("GET", base, nil, f.Owner.Access).Array(t)[0].(map[string]any)["url"],
		"a refused update changes nothing")

	// Roles: MEMBER and VIEWER read only; outsiders nothing.
	apitest.RequireProblem(t, h.Do("POST", base, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.created"}}, f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("PUT", base+"/"+id, map[string]any{"enabled": true}, f.Viewer.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("DELETE", base+"/"+id, nil, f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("POST", base+"/"+id+"/test", nil, f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("GET", base, nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	require.Equal(t, http.StatusOK, h.Do("GET", base+"/"+id+"/deliveries", nil, f.Viewer.Access).Status)

	// Another project's webhook is not found through this project.
	other := apitest.NewProject(t, h)
	theirs, _ := apitest.CreateWebhook(t, h, other.Key, other.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.created"}})
	tid := theirs["id"].(string)
	for _, c := range [][2]string{{"PUT", ""}, {"DELETE", ""}, {"GET", "/deliveries"}, {"POST", "/test"}} {
		var body any
		if c[0] == "PUT" {
			body = map[string]any{"enabled": false}
		}
		apitest.RequireProblem(t, h.Do(c[0], base+"/"+tid+c[1], body, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("WEBHOOK_NOT_FOUND"))
	}

	// Delete, then it is gone.
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", base+"/"+id, nil, f.Owner.Access).Status)
	apitest.RequireProblem(t, h.Do("DELETE", base+"/"+id, nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("WEBHOOK_NOT_FOUND"))
	require.Len(t, h.Do("GET", base, nil, f.Owner.Access).Array(t), 3)

	// Audit jobs: WEBHOOK_CREATED in the create's transaction, WEBHOOK_DELETED on delete;
	// refused and foreign calls enqueue nothing.
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'WEBHOOK_CREATED'
		AND args->>'resourceId' = $1 AND args->>'resourceType' = 'WEBHOOK' AND args->>'level' = 'WRITE' AND args->>'projectId' = $2`,
		id, f.ProjectID.String()))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job AS j, webhooks AS w WHERE w.id = $1 AND j.xmin = w.xmin
		AND j.args->>'action' = 'WEBHOOK_CREATED'`, tid), "job and row share one transaction")
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'WEBHOOK_DELETED'
		AND args->>'resourceId' = $1 AND args->>'userEmail' = $2`, id, f.Owner.Email))
	require.Equal(t, 5, h.Count(`SELECT count(*) FROM river_job WHERE args->>'action' = 'WEBHOOK_CREATED'`))
	require.Equal(t, 0, h.Count(`SELECT count(*) FROM river_job WHERE args::text LIKE '%' || $1 || '%'`, secret), "no job carries a secret")
}

// whCreateSecret creates a webhook and returns only its plaintext secret.
func whCreateSecret(t *testing.T, h *apitest.Harness, key, token string, body map[string]any) string {
	t.Helper()
	_, s := apitest.CreateWebhook(t, h, key, token, body)
	return s
}

func TestWebhookURLRejected(t *testing.T) {
	t.Parallel()
	urls := []string{"http://127.0.0.1/hook", "http://localhost:8080/hook", "http://10.0.0.5/hook", "http://192.168.1.20/hook",
		"http://169.254.169.254/latest", "http://[::1]/hook", "http://[fc00::1]/hook", "http://0.0.0.0/hook", "http://224.0.0.1/hook",
		"http://[::ffff:127.0.0.1]/hook"}
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)
	for _, u := range urls {
		apitest.RequireProblem(t, h.Do("POST", f.Path("/webhooks"), map[string]any{"url": u, "events": []string{"issue.created"}}, f.Owner.Access),
			400, "BAD_REQUEST", apitest.Reason("WEBHOOK_URL_REJECTED"))
	}
	require.Empty(t, h.Do("GET", f.Path("/webhooks"), nil, f.Owner.Access).Array(t), "nothing was saved")
	r := h.Do("POST", f.Path("/webhooks"), map[string]any{"url": urls[0], "events": []string{"issue.created"}}, f.Owner.Access, "Accept-Language", "de")
	require.Contains(t, r.JSON(t)["message"], "Webhook-URL")

	// TW_WEBHOOK_ALLOW_PRIVATE lets every one of them through.
	open := apitest.WebhookHarness(t)
	g := apitest.NewProject(t, open)
	for _, u := range urls {
		apitest.CreateWebhook(t, open, g.Key, g.Owner.Access, map[string]any{"url": u, "events": []string{"issue.created"}})
	}
	require.Len(t, open.Do("GET", g.Path("/webhooks"), nil, g.Owner.Access).Array(t), len(urls))
}
