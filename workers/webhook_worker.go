package workers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/taskweave/taskweave/domain/metric"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/jobs"
)

// addWebhookWorkers registers the delivery worker and returns the periodic cleanup job.
func addWebhookWorkers(ws *river.Workers, cfg Config, d Deps) []*river.PeriodicJob {
	wc := cfg.Webhook.WithDefaults()
	river.AddWorker(ws, NewWebhookDeliverWorker(wc, d))
	// Delivery records past their retention.
	river.AddWorker(ws, river.WorkFunc(func(ctx context.Context, job *river.Job[jobs.WebhookCleanup]) error {
		_, err := webhook.Cleanup(ctx, d.DB.Bun, job.Args.Retention, webhook.CleanupBatch)
		return err
	}))
	return []*river.PeriodicJob{periodic("webhook_cleanup", time.Hour, true, jobs.WebhookCleanup{Retention: wc.Retention})}
}

// WebhookDeliverWorker makes one attempt of each of a job's deliveries per run, sent
// concurrently. River owns the retry schedule: when an attempt failed, the run returns
// its error, NextRetry gives the configured delay, the next run sends only the failed
// deliveries again, and after the last attempt River discards the job.
type WebhookDeliverWorker struct {
	river.WorkerDefaults[jobs.WebhookDeliver]
	sender  *webhook.Sender
	delays  []time.Duration
	timeout time.Duration
	metrics *webhookMetrics
}

// NewWebhookDeliverWorker builds the worker with one shared Sender (one keep-alive
// HTTP client) and the delivery metrics registered on d.Registry.
func NewWebhookDeliverWorker(cfg webhook.Config, d Deps) *WebhookDeliverWorker {
	cfg = cfg.WithDefaults()
	return &WebhookDeliverWorker{
		sender: webhook.NewSender(d.DB.Keyed, cfg), delays: cfg.RetryDelays,
		timeout: cfg.Timeout + webhookTimeoutMargin, metrics: newWebhookMetrics(d.Registry),
	}
}

// Work implements river.Worker. A database error fails the run like a failed attempt:
// River runs the job again, and deliveries recorded as delivered are not sent twice.
func (w *WebhookDeliverWorker) Work(ctx context.Context, job *river.Job[jobs.WebhookDeliver]) error {
	final := job.Attempt >= job.MaxAttempts
	results, errs := w.sender.SendAll(ctx, job.Args.DeliveryIDs, w.delay(job.Attempt), final, job.Attempt > 1)
	var failed []error
	for i, res := range results {
		if errs[i] != nil {
			failed = append(failed, errs[i])
			continue
		}
		w.metrics.deliveries.WithLabelValues(res.Outcome.String()).Inc()
		if res.FirstSuccess {
			w.metrics.latency.Observe(res.Latency.Seconds())
		}
		if res.Err != nil {
			failed = append(failed, fmt.Errorf("delivery %s: %w", job.Args.DeliveryIDs[i], res.Err))
		}
	}
	return errors.Join(failed...)
}

// NextRetry is the configured delay after this attempt, measured from now, the same
// instant (to the millisecond) the worker just recorded as the record's next_retry_at.
// A run older than its timeout was cut off by its process dying: River's rescuer is
// asking, the receiver's answer (if any) was never recorded, and the deliveries have
// waited for the rescue already, so they are sent again at once.
func (w *WebhookDeliverWorker) NextRetry(job *river.Job[jobs.WebhookDeliver]) time.Time {
	if job.AttemptedAt != nil && time.Since(*job.AttemptedAt) > w.timeout {
		return time.Now()
	}
	return time.Now().Add(w.delay(job.Attempt))
}

// Timeout leaves the HTTP attempt its full timeout plus time to record the outcome.
func (w *WebhookDeliverWorker) Timeout(*river.Job[jobs.WebhookDeliver]) time.Duration {
	return w.timeout
}

// delay is the wait after attempt (1-based); attempts beyond the list (a job inserted
// under a longer schedule) reuse its last entry.
func (w *WebhookDeliverWorker) delay(attempt int) time.Duration {
	return webhookDelay(w.delays, attempt)
}

// webhookDelay is the wait of the webhook schedule delays after attempt (1-based).
func webhookDelay(delays []time.Duration, attempt int) time.Duration {
	if len(delays) == 0 {
		return time.Minute
	}
	return delays[min(max(attempt, 1), len(delays))-1]
}

// webhookMetrics are the delivery metrics the dashboard reads.
type webhookMetrics struct {
	deliveries *prometheus.CounterVec
	latency    prometheus.Histogram
}

// newWebhookMetrics registers the metrics on reg (nil: unregistered); a second client
// on the same registry shares the first one's collectors.
func newWebhookMetrics(reg *prometheus.Registry) *webhookMetrics {
	m := &webhookMetrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome: delivered, retry_scheduled, failed (final) or skipped (nothing sent).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "taskweave_webhook_delivery_latency_seconds",
			Help:    "Time from a delivery record's creation (its event's commit) to the receiver's 2xx, first success only.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
		}),
	}
	if reg != nil {
		m.deliveries = metric.Register(reg, m.deliveries)
		m.latency = metric.Register(reg, m.latency)
	}
	// Every outcome exists from the start, so "failed deliveries" reads 0, not no data.
	for _, o := range []webhook.Outcome{webhook.Skipped, webhook.Delivered, webhook.RetryScheduled, webhook.Failed} {
		m.deliveries.WithLabelValues(o.String())
	}
	return m
}
