package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// DeliveriesPerJob is the most deliveries one WebhookDeliver job carries. A job's
// deliveries are sent concurrently, so its timeout stays one attempt's.
const DeliveriesPerJob = 10

// WebhookDeliver sends delivery records to one webhook: the deliveries one transaction's
// events caused for it (up to DeliveriesPerJob; more take more jobs), or the one record
// of a test ping or a redelivery. One job per transaction and webhook, not per delivery,
// keeps the queue's own cost (insert, fetch, completion) off each delivery.
//
// Every run of the job is one attempt of each delivery it still has to send: a retry
// sends only those whose last attempt failed. The worker reads the URL, secret and
// payload from the database, so the secret never sits in a job row; support staff find
// a project's or an issue's deliveries by args projectId / issueIds.
// MaxAttempts (retry delays + 1) is set by whoever inserts it. The webhook consumer's
// statement builds these args as JSON (domain/webhook jobsSQL): a field added here must
// be built there too.
type WebhookDeliver struct {
	DeliveryIDs []uuid.UUID `json:"deliveryIds"`
	WebhookID   uuid.UUID   `json:"webhookId"`
	ProjectID   uuid.UUID   `json:"projectId"`
	// IssueIDs are the distinct issues the deliveries are about (none for a ping).
	IssueIDs []uuid.UUID `json:"issueIds,omitempty"`
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
