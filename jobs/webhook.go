package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// WebhookDeliver sends one delivery record to its webhook. The worker reads the URL,
// secret and payload from the database, so the secret never sits in a job row; support
// staff find a project's or an issue's deliveries by args->>'projectId' / 'issueId'.
// MaxAttempts (retry delays + 1) is set by whoever inserts it.
type WebhookDeliver struct {
	DeliveryID uuid.UUID  `json:"deliveryId"`
	WebhookID  uuid.UUID  `json:"webhookId"`
	ProjectID  uuid.UUID  `json:"projectId"`
	IssueID    *uuid.UUID `json:"issueId,omitempty"`
}

// Kind implements river.JobArgs.
func (WebhookDeliver) Kind() string { return "webhook.deliver" }

// InsertOpts puts deliveries on their own queue, so a slow receiver never delays others.
func (WebhookDeliver) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueWebhooks}
}

// WebhookCleanup deletes delivery records older than the retention period.
type WebhookCleanup struct {
	Retention time.Duration `json:"retention"`
}

// Kind implements river.JobArgs.
func (WebhookCleanup) Kind() string { return "webhook.cleanup" }

// InsertOpts runs cleanup beside the deliveries it prunes.
func (WebhookCleanup) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueWebhooks}
}
