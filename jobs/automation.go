package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// AutomationEvaluate evaluates the automation rules of one triggering event for one
// issue: inserted by the automation consumer in the transaction of the change, one per
// event (one per issue of a started or completed sprint). Support staff find an issue's
// evaluations by args projectId / issueId in /admin/jobs.
type AutomationEvaluate struct {
	// EventID names the triggering event; with the rule id it is the unique key of an
	// execution, so a retried job never applies a rule twice.
	EventID uuid.UUID `json:"eventId"`
	// ChainID is the event id of the change a person made that started the chain this
	// event belongs to (its own EventID at depth 0): every rule run of the chain spends
	// the same action budget. Nil in a job of an older release: EventID stands in.
	ChainID   uuid.UUID `json:"chainId,omitempty"`
	Trigger   string    `json:"trigger"`
	ProjectID uuid.UUID `json:"projectId"`
	IssueID   uuid.UUID `json:"issueId"`
	// Extras are what the trigger's filters compare: toStatusId for STATUS_CHANGED,
	// priority for PRIORITY_CHANGED.
	Extras map[string]string `json:"extras,omitempty"`
	// ChainDepth is 0 for a change a person made, n+1 for a change an action of a
	// depth-n evaluation made.
	ChainDepth int `json:"chainDepth"`
	// EventAt is when the change was published, for the event-to-execution latency.
	EventAt time.Time `json:"eventAt"`
	// RunID is the scheduled run an evaluation belongs to (automation_runs): set on the
	// per-issue evaluations of a SCHEDULED rule's run, which the run's job makes itself
	// (never inserted as jobs of this kind); nil otherwise.
	RunID *uuid.UUID `json:"runId,omitempty"`
}

// Kind implements river.JobArgs.
func (AutomationEvaluate) Kind() string { return "automation.evaluate" }

// InsertOpts puts evaluations on their own queue, so a burst of rule work never delays
// notifications or webhooks. An infrastructure failure retries with River's backoff.
func (AutomationEvaluate) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueAutomation, MaxAttempts: 10}
}

// AutomationCleanup deletes executions older than the retention period
// (TW_AUTOMATION_RETENTION).
type AutomationCleanup struct {
	Retention time.Duration `json:"retention"`
}

// Kind implements river.JobArgs.
func (AutomationCleanup) Kind() string { return "automation.cleanup" }

// InsertOpts runs cleanup on the automation queue.
func (AutomationCleanup) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueAutomation}
}

// AutomationWebhook sends one web request of a rule's SEND_WEBHOOK action: inserted in
// the rule's transaction with its delivery row, which holds the URL, body and secret
// (never the job row). Every run is one attempt; MaxAttempts (TW_WEBHOOK_RETRY_DELAYS
// + 1) is set by whoever inserts it, and the worker's NextRetry follows the webhook
// schedule.
type AutomationWebhook struct {
	DeliveryID uuid.UUID `json:"deliveryId"`
	RuleID     uuid.UUID `json:"ruleId"`
	ProjectID  uuid.UUID `json:"projectId"`
	IssueID    uuid.UUID `json:"issueId"`
}

// Kind implements river.JobArgs.
func (AutomationWebhook) Kind() string { return "automation.webhook" }

// InsertOpts puts the requests on the webhooks queue, beside the webhook deliveries.
func (AutomationWebhook) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueWebhooks}
}

// AutomationScheduleScan starts the runs of the scheduled rules that are due: a
// periodic job (every minute; River's leader enqueues it), whose work is safe to run on
// several workers at once (automation.ScanSchedules).
type AutomationScheduleScan struct{}

// Kind implements river.JobArgs.
func (AutomationScheduleScan) Kind() string { return "automation.schedule_scan" }

// InsertOpts runs the scan on the automation queue.
func (AutomationScheduleScan) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueAutomation}
}

// AutomationRun runs one due slot of a scheduled rule on the issues its filter
// matches: inserted by the scan with the run's automation_runs row (unique per rule
// and slot), in the same transaction.
type AutomationRun struct {
	RunID     uuid.UUID `json:"runId"`
	RuleID    uuid.UUID `json:"ruleId"`
	ProjectID uuid.UUID `json:"projectId"`
}

// Kind implements river.JobArgs.
func (AutomationRun) Kind() string { return "automation.run" }

// InsertOpts puts runs on the automation queue; an infrastructure failure retries
// with River's backoff, and a retry skips the issues already done.
func (AutomationRun) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueAutomation, MaxAttempts: 10}
}
