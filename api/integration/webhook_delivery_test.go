package integration_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/workers"
)

// whMetric reads a counter or a histogram's sample count from the workers' registry.
func whMetric(t *testing.T, reg *prometheus.Registry, name, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// whDelivery reads a delivery through the API's list.
func whDeliveries(t *testing.T, h *apitest.Harness, key, webhookID, token string) []map[string]any {
	t.Helper()
	r := h.Do("GET", "/api/v1/projects/"+key+"/webhooks/"+webhookID+"/deliveries", nil, token)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var out []map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &out))
	return out
}

func TestWebhookDeliversIssueCreated(t *testing.T) {
	t.Parallel()
	h := apitest.WebhookHarness(t)
	f := apitest.NewProject(t, h)
	recv := apitest.NewReceiver(t, h, nil)
	wh, secret := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": recv.URL(), "events": []string{"issue.created"}, "secret": "top-secret"})
	require.Equal(t, "top-secret", secret)
	whID := wh["id"].(string)

	iss := f.Create(t, map[string]any{"title": "Hooked"})
	issueID := iss["id"].(string)
	// Record, job and issue commit in one transaction (same xmin); the job names the
	// delivery, webhook, project and issue, and never the secret.
	var deliveryID string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT id::text FROM webhook_deliveries WHERE webhook_id = $1", whID).Scan(&deliveryID))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job AS j, webhook_deliveries AS d, issues AS i
		WHERE d.id = $1 AND i.id = $2 AND j.kind = 'webhook.deliver' AND j.args->'deliveryIds' = jsonb_build_array($1::text)
		AND j.xmin = d.xmin AND d.xmin = i.xmin AND j.queue = 'webhooks' AND j.max_attempts = 3
		AND j.args->>'webhookId' = $3 AND j.args->>'projectId' = $4 AND j.args->'issueIds' = jsonb_build_array($2::text)
		AND j.args::text NOT LIKE '%top-secret%'`, deliveryID, issueID, whID, f.ProjectID.String()))
	pending := whDeliveries(t, h, f.Key, whID, f.Viewer.Access)
	require.Len(t, pending, 1)
	require.Equal(t, float64(0), pending[0]["attemptCount"])
	require.Nil(t, pending[0]["deliveredAt"])

	h.StartWorkers()
	hit := recv.Wait(t, 1, 15*time.Second)[0]
	require.Equal(t, "application/json", hit.Header.Get("Content-Type"))
	require.Equal(t, "issue.created", hit.Header.Get("X-Taskweave-Event"))
	require.Equal(t, deliveryID, hit.Header.Get("X-Taskweave-Delivery"))
	apitest.VerifySignature(t, hit, "top-secret")

	var body map[string]any
	require.NoError(t, json.Unmarshal(hit.Body, &body))
	require.Equal(t, "issue.created", body["event"])
	require.Equal(t, f.ProjectID.String(), body["projectId"])
	require.Equal(t, f.Key, body["projectKey"])
	require.Equal(t, deliveryID, body["id"])
	ts, err := time.Parse(time.RFC3339Nano, body["timestamp"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), ts, time.Minute)
	require.Regexp(t, `Z$`, body["timestamp"])
	require.Equal(t, map[string]any{"issueId": issueID, "issueKey": iss["key"], "title": "Hooked"}, body["data"])

	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM webhook_deliveries WHERE id = $1 AND delivered_at IS NOT NULL", deliveryID) == 1
	}, "delivery recorded")
	d := whDeliveries(t, h, f.Key, whID, f.Owner.Access)[0]
	require.Equal(t, deliveryID, d["id"])
	require.Equal(t, whID, d["webhookId"])
	require.Equal(t, "issue.created", d["eventType"])
	require.Equal(t, string(hit.Body), d["payload"], "the stored payload is exactly the bytes sent")
	require.Equal(t, float64(200), d["responseStatus"])
	require.Equal(t, "reply OK", d["responseBody"])
	require.Equal(t, float64(1), d["attemptCount"])
	require.NotNil(t, d["deliveredAt"])
	require.Nil(t, d["nextRetryAt"])
	for _, k := range []string{"createdAt", "lastError"} {
		require.Contains(t, d, k)
	}
	apitest.Eventually(t, 5*time.Second, func() bool {
		return whMetric(t, h.WorkerRegistry, "taskweave_webhook_deliveries_total", "delivered") == 1 &&
			whMetric(t, h.WorkerRegistry, "taskweave_webhook_delivery_latency_seconds", "") == 1
	}, "metrics counted the delivery")
}

func TestWebhookEveryIssueEventMapped(t *testing.T) {
	t.Parallel()
	h := apitest.WebhookHarness(t)
	f := apitest.NewProject(t, h)
	all, _ := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL,
		"events": []string{"issue.created", "issue.status_changed", "issue.assigned", "issue.updated", "issue.deleted"}})
	moves, _ := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.status_changed"}})
	off, _ := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "enabled": false,
		"events": []string{"issue.created", "issue.status_changed", "issue.assigned", "issue.updated", "issue.deleted"}})
	other := apitest.NewProject(t, h)
	elsewhere, _ := apitest.CreateWebhook(t, h, other.Key, other.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.created"}})

	iss := f.Create(t, map[string]any{"title": "Mapped"})
	id, key := iss["id"].(string), iss["key"].(string)
	f.Patch(t, id, map[string]any{"statusId": f.Prog})
	f.Patch(t, id, map[string]any{"assigneeId": f.Member.ID})
	f.Patch(t, id, map[string]any{"title": "Renamed"})
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", f.Path("/issues/"+id), nil, f.Owner.Access).Status)

	bodies := func(webhookID string) []map[string]any {
		rows, err := h.DB.Pool.Query(context.Background(), "SELECT payload FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at", webhookID)
		require.NoError(t, err)
		defer rows.Close()
		out := []map[string]any{}
		for rows.Next() {
			var p string
			require.NoError(t, rows.Scan(&p))
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(p), &m))
			out = append(out, m)
		}
		return out
	}
	got := bodies(all["id"].(string))
	require.Len(t, got, 5)
	events := []string{}
	for _, b := range got {
		events = append(events, b["event"].(string))
	}
	require.Equal(t, []string{"issue.created", "issue.status_changed", "issue.assigned", "issue.updated", "issue.deleted"}, events)
	require.Equal(t, map[string]any{"issueId": id, "issueKey": key, "oldStatus": "To Do", "newStatus": "In Progress"}, got[1]["data"])
	require.Equal(t, map[string]any{"issueId": id, "issueKey": key, "field": "assignee", "newValue": "Mia"}, got[2]["data"])
	require.Equal(t, map[string]any{"issueId": id, "issueKey": key, "field": "title", "newValue": "Renamed"}, got[3]["data"])
	require.Equal(t, map[string]any{"issueId": id, "issueKey": key}, got[4]["data"])

	moved := bodies(moves["id"].(string))
	require.Len(t, moved, 1, "the events filter is respected")
	require.Equal(t, "issue.status_changed", moved[0]["event"])
	require.Empty(t, bodies(off["id"].(string)), "a disabled webhook gets nothing")
	require.Empty(t, bodies(elsewhere["id"].(string)), "another project's webhook gets nothing")
	// One job per transaction and webhook: each request above is one transaction.
	require.Equal(t, 6, h.Count("SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver' AND args->>'projectId' = $1", f.ProjectID.String()))
	require.Equal(t, 5, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver' AND args->'issueIds' = jsonb_build_array($1::text)
		AND args->>'webhookId' = $2 AND jsonb_array_length(args->'deliveryIds') = 1`, id, all["id"].(string)))

	// Unassigning sends an empty newValue.
	iss2 := f.Create(t, map[string]any{"title": "Unassign", "assigneeId": f.Member.ID})
	f.Patch(t, iss2["id"].(string), map[string]any{"clearAssignee": true})
	last := bodies(all["id"].(string))
	require.Equal(t, map[string]any{"issueId": iss2["id"], "issueKey": iss2["key"], "field": "assignee", "newValue": ""}, last[len(last)-1]["data"])
}

func TestWebhookRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	delays := []time.Duration{300 * time.Millisecond, 600 * time.Millisecond}
	h := apitest.WebhookHarness(t, delays...)
	f := apitest.NewProject(t, h)
	recv := apitest.NewReceiver(t, h, func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	wh, secret := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": recv.URL(), "events": []string{"issue.created"}})
	h.StartWorkers()
	f.Create(t, map[string]any{"title": "Flaky receiver"})

	hits := recv.Wait(t, 3, 30*time.Second)
	require.Len(t, hits, 3)
	id := hits[0].Header.Get("X-Taskweave-Delivery")
	require.NotEmpty(t, id)
	for i, hit := range hits {
		require.Equal(t, id, hit.Header.Get("X-Taskweave-Delivery"), "attempt %d", i+1)
		require.Equal(t, string(hits[0].Body), string(hit.Body), "attempt %d sends the same bytes", i+1)
		apitest.VerifySignature(t, hit, secret)
	}
	require.Nil(t, hits[0].Before)
	for i := 1; i < 3; i++ {
		// The schedule recorded after failure i is the failure time plus delay i, and
		// attempt i+1 did not come before it.
		require.NotNil(t, hits[i].Before, "attempt %d", i+1)
		scheduled := *hits[i].Before
		require.GreaterOrEqual(t, scheduled.Sub(hits[i-1].At), delays[i-1], "attempt %d", i+1)
		require.Less(t, scheduled.Sub(hits[i-1].At), delays[i-1]+time.Second, "attempt %d", i+1)
		require.False(t, hits[i].At.Before(scheduled), "attempt %d came before its schedule", i+1)
	}

	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM webhook_deliveries WHERE id = $1 AND delivered_at IS NOT NULL", id) == 1
	}, "delivered")
	d := whDeliveries(t, h, f.Key, wh["id"].(string), f.Owner.Access)[0]
	require.Equal(t, float64(3), d["attemptCount"])
	require.Equal(t, float64(200), d["responseStatus"])
	require.Nil(t, d["nextRetryAt"])
	require.Nil(t, d["lastError"])
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM river_job WHERE args->'deliveryIds' = jsonb_build_array($1::text) AND state = 'completed' AND attempt = 3", id) == 1
	}, "job completed on attempt 3")
	require.Equal(t, float64(2), whMetric(t, h.WorkerRegistry, "taskweave_webhook_deliveries_total", "retry_scheduled"))
	require.Equal(t, float64(1), whMetric(t, h.WorkerRegistry, "taskweave_webhook_deliveries_total", "delivered"))
}

func TestWebhookAlwaysFailsThreeAttempts(t *testing.T) {
	t.Parallel()
	h := apitest.WebhookHarness(t, 200*time.Millisecond, 200*time.Millisecond)
	f := apitest.NewProject(t, h)
	recv := apitest.NewReceiver(t, h, func(int) int { return http.StatusBadGateway })
	wh, _ := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": recv.URL(), "events": []string{"issue.created"}})
	h.StartWorkers()
	f.Create(t, map[string]any{"title": "Dead receiver"})

	recv.Wait(t, 3, 30*time.Second)
	var id string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT id::text FROM webhook_deliveries WHERE webhook_id = $1", wh["id"]).Scan(&id))
	// Discarded is final: River will never run the job again.
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM river_job WHERE args->'deliveryIds' = jsonb_build_array($1::text) AND state = 'discarded' AND attempt = 3", id) == 1
	}, "job discarded after attempt 3")
	require.Len(t, recv.Got(), 3, "no fourth attempt")
	d := whDeliveries(t, h, f.Key, wh["id"].(string), f.Owner.Access)[0]
	require.Equal(t, float64(3), d["attemptCount"])
	require.Equal(t, float64(502), d["responseStatus"], "failed attempts record their status")
	require.Equal(t, "reply Bad Gateway", d["responseBody"])
	require.Nil(t, d["nextRetryAt"])
	require.Nil(t, d["deliveredAt"])
	require.Contains(t, d["lastError"], "502")
	require.Equal(t, float64(1), whMetric(t, h.WorkerRegistry, "taskweave_webhook_deliveries_total", "failed"))
	require.Equal(t, float64(2), whMetric(t, h.WorkerRegistry, "taskweave_webhook_deliveries_total", "retry_scheduled"))
}

// TestWebhookJobRetriesOnlyItsFailedDeliveries: one request's events go to a webhook as
// one job. When one of its deliveries fails, the job's retry sends that one again and
// not the others, which were delivered.
func TestWebhookJobRetriesOnlyItsFailedDeliveries(t *testing.T) {
	t.Parallel()
	h := apitest.WebhookHarness(t, 200*time.Millisecond, 200*time.Millisecond)
	f := apitest.NewProject(t, h)
	recv := apitest.NewReceiver(t, h, func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	wh, secret := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": recv.URL(), "events": []string{"issue.status_changed", "issue.updated"}})
	iss := f.Create(t, map[string]any{"title": "Several at once"})
	f.Patch(t, iss["id"].(string), map[string]any{"statusId": f.Prog, "title": "Renamed", "priority": "HIGH"})
	var jobID int64
	var sent int
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `SELECT id, jsonb_array_length(args->'deliveryIds') FROM river_job
		WHERE kind = 'webhook.deliver' AND args->>'webhookId' = $1`, wh["id"]).Scan(&jobID, &sent), "one job for the request")
	require.Equal(t, 3, sent, "status, title and priority: three deliveries in the job")
	h.StartWorkers()

	hits := recv.Wait(t, sent+1, 30*time.Second)
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM river_job WHERE id = $1 AND state = 'completed' AND attempt = 2", jobID) == 1
	}, "the job completed on its second run")
	require.Equal(t, sent+1, len(recv.Got()), "only the failed delivery was sent again")
	byID := map[string]int{}
	for _, hit := range hits {
		apitest.VerifySignature(t, hit, secret)
		byID[hit.Header.Get("X-Taskweave-Delivery")]++
	}
	failed := hits[0].Header.Get("X-Taskweave-Delivery")
	require.Len(t, byID, sent)
	require.Equal(t, 2, byID[failed])
	require.Equal(t, failed, hits[sent].Header.Get("X-Taskweave-Delivery"), "the retry is the failed one")
	for _, d := range whDeliveries(t, h, f.Key, wh["id"].(string), f.Owner.Access) {
		want := 1.0
		if d["id"] == failed {
			want = 2
		}
		require.Equal(t, want, d["attemptCount"], d["id"])
		require.NotNil(t, d["deliveredAt"], d["id"])
		require.Nil(t, d["nextRetryAt"], d["id"])
		require.Nil(t, d["lastError"], d["id"])
	}
	require.Equal(t, float64(sent), whMetric(t, h.WorkerRegistry, "taskweave_webhook_deliveries_total", "delivered"))
	require.Equal(t, float64(1), whMetric(t, h.WorkerRegistry, "taskweave_webhook_deliveries_total", "retry_scheduled"))
	require.Equal(t, float64(sent-1), whMetric(t, h.WorkerRegistry, "taskweave_webhook_deliveries_total", "skipped"),
		"the second run skips the delivered ones")
}

// TestWebhookRedirectIsAFailedAttempt: a receiver that answers 302 with a Location
// naming a second receiver is not followed. The second receiver is never called, and
// the attempt is recorded as failed (302, not delivered) with a retry scheduled.
func TestWebhookRedirectIsAFailedAttempt(t *testing.T) {
	t.Parallel()
	h := apitest.WebhookHarness(t, time.Hour)
	f := apitest.NewProject(t, h)
	target := apitest.NewReceiver(t, h, nil)
	recv := apitest.NewReceiver(t, h, func(int) int { return http.StatusFound })
	recv.RedirectTo(target.URL())
	wh, _ := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": recv.URL(), "events": []string{"issue.created"}})
	h.StartWorkers()
	f.Create(t, map[string]any{"title": "Redirected"})
	recv.Wait(t, 1, 15*time.Second)
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1 AND attempt_count = 1 AND response_status = 302 AND next_retry_at IS NOT NULL AND delivered_at IS NULL", wh["id"]) == 1
	}, "302 recorded as a failed attempt with a retry scheduled")
	require.Len(t, recv.Got(), 1, "one attempt; the retry is an hour away")
	require.Empty(t, target.Got(), "the redirect's target was never called")
}

func TestWebhookDialTimeAddressCheck(t *testing.T) {
	t.Parallel()
	// Neither the API nor the workers allow private targets; the row is written directly,
	// as if the name had resolved to a public address when it was saved.
	h := apitest.New(t, apitest.Options{Configure: func(s *api.Settings) {
		s.Webhook = webhook.Config{RetryDelays: []time.Duration{time.Hour}}
	}})
	f := apitest.NewProject(t, h)
	recv := apitest.NewReceiver(t, h, nil)
	apitest.RequireProblem(t, h.Do("POST", f.Path("/webhooks"), map[string]any{"url": recv.URL(), "events": []string{"issue.created"}}, f.Owner.Access),
		400, "BAD_REQUEST", apitest.Reason("WEBHOOK_URL_REJECTED"))
	var whID uuid.UUID
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `INSERT INTO webhooks (project_id, url, secret, events)
		VALUES ($1, $2, 'secret', '{issue.created}') RETURNING id`, f.ProjectID, recv.URL()).Scan(&whID))
	h.StartWorkersWith(func(c *workers.Config) { c.Webhook.AllowPrivate = false })
	f.Create(t, map[string]any{"title": "Rebound"})

	apitest.Eventually(t, 15*time.Second, func() bool {
		return h.Count(`SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1 AND attempt_count = 1
			AND response_status IS NULL AND delivered_at IS NULL AND last_error LIKE '%non-public address%'`, whID) == 1
	}, "the attempt failed at dial time")
	require.Empty(t, recv.Got(), "the receiver was never reached")
	require.Equal(t, float64(1), whMetric(t, h.WorkerRegistry, "taskweave_webhook_deliveries_total", "retry_scheduled"))
}

func TestWebhookPingAndRedeliver(t *testing.T) {
	t.Parallel()
	h := apitest.WebhookHarness(t)
	f := apitest.NewProject(t, h)
	recv := apitest.NewReceiver(t, h, nil)
	wh, secret := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": recv.URL(), "events": []string{"sprint.started"}})
	base := f.Path("/webhooks/" + wh["id"].(string))

	r := h.Do("POST", base+"/test", nil, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	ping := r.JSON(t)
	require.Equal(t, "ping", ping["eventType"])
	require.Equal(t, wh["id"], ping["webhookId"])
	require.Equal(t, float64(0), ping["attemptCount"])
	for _, k := range []string{"responseStatus", "responseBody", "deliveredAt", "nextRetryAt"} {
		require.Contains(t, ping, k)
		require.Nil(t, ping[k], k)
	}
	require.NotEmpty(t, ping["createdAt"])
	require.Equal(t, http.StatusCreated, h.Do("POST", base+"/test", "{}", f.Owner.Access).Status, "{} is accepted")
	apitest.RequireProblem(t, h.Do("POST", base+"/test", "[", f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("MALFORMED_JSON"))

	h.StartWorkers()
	hits := recv.Wait(t, 2, 15*time.Second)
	var first apitest.Hit
	for _, hit := range hits {
		if hit.Header.Get("X-Taskweave-Delivery") == ping["id"] {
			first = hit
		}
	}
	require.NotNil(t, first.Body, "the ping was sent")
	require.Equal(t, "ping", first.Header.Get("X-Taskweave-Event"))
	apitest.VerifySignature(t, first, secret)
	var body map[string]any
	require.NoError(t, json.Unmarshal(first.Body, &body))
	require.Equal(t, "ping", body["event"])
	require.Equal(t, f.Key, body["project"])
	require.Equal(t, f.Key, body["projectKey"])
	require.Equal(t, f.ProjectID.String(), body["projectId"])
	require.Equal(t, ping["id"], body["id"])
	require.Equal(t, map[string]any{}, body["data"])
	require.Equal(t, ping["payload"], string(first.Body))
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM webhook_deliveries WHERE id = $1 AND attempt_count = 1 AND delivered_at IS NOT NULL", ping["id"]) == 1
	}, "ping recorded")

	// Redelivery sends the same record again: same id, same bytes; attemptCount keeps counting.
	r = h.Do("POST", base+"/deliveries/"+ping["id"].(string)+"/redeliver", nil, f.Owner.Access)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	require.Equal(t, ping["id"], r.JSON(t)["id"])
	hits = recv.Wait(t, 3, 15*time.Second)
	again := hits[2]
	require.Equal(t, ping["id"], again.Header.Get("X-Taskweave-Delivery"))
	require.Equal(t, string(first.Body), string(again.Body))
	apitest.VerifySignature(t, again, secret)
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM webhook_deliveries WHERE id = $1 AND attempt_count = 2", ping["id"]) == 1
	}, "redelivery recorded")

	// Refusals: unknown delivery, a delivery of another webhook, a member, a disabled webhook.
	apitest.RequireProblem(t, h.Do("POST", base+"/deliveries/"+uuid.NewString()+"/redeliver", nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("DELIVERY_NOT_FOUND"))
	other, _ := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": recv.URL(), "events": []string{"sprint.started"}})
	apitest.RequireProblem(t, h.Do("POST", f.Path("/webhooks/"+other["id"].(string)+"/deliveries/"+ping["id"].(string)+"/redeliver"), nil, f.Owner.Access),
		404, "NOT_FOUND", apitest.Reason("DELIVERY_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("POST", base+"/deliveries/"+ping["id"].(string)+"/redeliver", nil, f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("POST", base+"/deliveries/nope/redeliver", nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	require.Equal(t, http.StatusOK, h.Do("PUT", base, map[string]any{"enabled": false}, f.Owner.Access).Status)
	apitest.RequireProblem(t, h.Do("POST", base+"/test", nil, f.Owner.Access), 409, "CONFLICT", apitest.Reason("WEBHOOK_DISABLED"))
	apitest.RequireProblem(t, h.Do("POST", base+"/deliveries/"+ping["id"].(string)+"/redeliver", nil, f.Owner.Access), 409, "CONFLICT", apitest.Reason("WEBHOOK_DISABLED"))
}

func TestWebhookDeliveriesList(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)
	wh, _ := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.created"}})
	whID := wh["id"].(string)
	// 25 records, one a minute, newest last.
	_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO webhook_deliveries (id, webhook_id, event_type, payload, created_at)
		SELECT gen_random_uuid(), $1, 'issue.created', '{"n":' || n || '}', now() - make_interval(mins => 100 - n)
		FROM generate_series(1, 25) AS n`, whID)
	require.NoError(t, err)
	base := f.Path("/webhooks/" + whID + "/deliveries")

	r := h.Do("GET", base, nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	page := r.Array(t)
	require.Len(t, page, 20, "default size 20")
	require.Equal(t, `{"n":25}`, page[0].(map[string]any)["payload"], "newest first")
	require.Equal(t, `{"n":6}`, page[19].(map[string]any)["payload"])
	prev := ""
	for _, e := range page {
		d := e.(map[string]any)
		for _, k := range []string{"id", "webhookId", "eventType", "payload", "responseStatus", "responseBody", "attemptCount",
			"deliveredAt", "createdAt", "nextRetryAt"} {
			require.Contains(t, d, k)
		}
		if prev != "" {
			require.Less(t, d["createdAt"].(string), prev)
		}
		prev = d["createdAt"].(string)
	}
	rest := h.Do("GET", base+"?page=1", nil, f.Owner.Access).Array(t)
	require.Len(t, rest, 5)
	require.Equal(t, `{"n":5}`, rest[0].(map[string]any)["payload"])
	require.Len(t, h.Do("GET", base+"?size=500", nil, f.Owner.Access).Array(t), 25, "size is clamped to 200")
	require.Len(t, h.Do("GET", base+"?page=2&size=10", nil, f.Owner.Access).Array(t), 5)
	require.Equal(t, "[]", string(h.Do("GET", base+"?page=9", nil, f.Owner.Access).Body))
	apitest.RequireProblem(t, h.Do("GET", base+"?size=0", nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_PAGE"))
	apitest.RequireProblem(t, h.Do("GET", base+"?page=-1", nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_PAGE"))
	apitest.RequireProblem(t, h.Do("GET", base+"?page=99999999999", nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_PAGE"))
	apitest.RequireProblem(t, h.Do("GET", f.Path("/webhooks/"+uuid.NewString()+"/deliveries"), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("WEBHOOK_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("GET", base, nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
}
