package workers

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/taskweave/taskweave/domain/automation"
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
}

// NewAutomationWebhookWorker builds the worker with its own delivery client.
func NewAutomationWebhookWorker(cfg webhook.Config, d Deps) *AutomationWebhookWorker {
	cfg = cfg.WithDefaults()
	return &AutomationWebhookWorker{db: d.DB, sender: webhook.NewSender(d.DB.Keyed, cfg), delays: cfg.RetryDelays,
		timeout: cfg.Timeout + webhookTimeoutMargin}
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
