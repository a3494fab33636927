package workers

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/metric"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// AutomationWebhookWorker sends the web requests of rules' SEND_WEBHOOK actions: one
// attempt per run, through the webhook delivery client (address rule, signature,
// headers), recorded on the delivery row; River retries on the webhook schedule
// (TW_WEBHOOK_RETRY_DELAYS) and discards the job after the last attempt.
type AutomationWebhookWorker struct {
	river.WorkerDefaults[jobs.AutomationWebhook]
	db      *store.DB
	sender  *webhook.Sender
	delays  []time.Duration
	timeout time.Duration
	// deliveries counts the attempts by outcome (taskweave_automation_webhook_deliveries_total).
	deliveries *prometheus.CounterVec
}

// webhookActionOutcomes label taskweave_automation_webhook_deliveries_total.
var webhookActionOutcomes = []string{"delivered", "retrying", "failed"}

func newAutomationWebhookMetric(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "taskweave_automation_webhook_deliveries_total",
		Help: "Attempts of SEND_WEBHOOK action requests, by outcome: delivered (a 2xx reply), retrying (failed, another attempt follows on the webhook retry schedule) or failed (the last attempt failed).",
	}, []string{"outcome"})
	if reg != nil {
		c = metric.Register(reg, c)
	}
	for _, o := range webhookActionOutcomes {
		c.WithLabelValues(o)
	}
	return c
}

// NewAutomationWebhookWorker builds the worker with its own delivery client.
func NewAutomationWebhookWorker(cfg webhook.Config, d Deps) *AutomationWebhookWorker {
	cfg = cfg.WithDefaults()
	return &AutomationWebhookWorker{db: d.DB, sender: webhook.NewSender(d.DB.Keyed, cfg), delays: cfg.RetryDelays,
		timeout: cfg.Timeout + webhookTimeoutMargin, deliveries: newAutomationWebhookMetric(d.Registry)}
}

// Work implements river.Worker. A request already delivered (a rescued run that had
// recorded it) is not sent again; one whose rule is gone is dropped.
func (w *AutomationWebhookWorker) Work(ctx context.Context, job *river.Job[jobs.AutomationWebhook]) error {
	d, err := automation.LoadDelivery(ctx, w.db.Bun, job.Args.DeliveryID)
	if errors.Is(err, automation.ErrDeliveryGone) {
		return nil
	}
	if err != nil {
		return err
	}
	if d.Status == automation.DeliveryDelivered {
		return nil
	}
	status, body, sendErr := w.sender.Post(ctx, d.ID, d.URL, d.Secret, automation.EventRuleFired, d.Payload)
	final := job.Attempt >= job.MaxAttempts
	if err := automation.RecordAttempt(ctx, w.db.Bun, d.ID, status, body, sendErr, final,
		time.Now().Add(webhookDelay(w.delays, job.Attempt))); err != nil {
		return err
	}
	switch {
	case sendErr == nil:
		w.deliveries.WithLabelValues("delivered").Inc()
	case final:
		w.deliveries.WithLabelValues("failed").Inc()
	default:
		w.deliveries.WithLabelValues("retrying").Inc()
	}
	return sendErr
}

// NextRetry is the webhook schedule's delay after this attempt, the time recorded on
// the delivery row.
func (w *AutomationWebhookWorker) NextRetry(job *river.Job[jobs.AutomationWebhook]) time.Time {
	return time.Now().Add(webhookDelay(w.delays, job.Attempt))
}

// Timeout leaves the HTTP attempt its full timeout plus time to record the outcome.
func (w *AutomationWebhookWorker) Timeout(*river.Job[jobs.AutomationWebhook]) time.Duration {
	return w.timeout
}
