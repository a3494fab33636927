package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// IntegrationEvent parses one stored incoming provider payload into issue references.
// The request that stored the payload inserts it in the same transaction.
type IntegrationEvent struct {
	EventID   uuid.UUID `json:"eventId"`
	ProjectID uuid.UUID `json:"projectId"`
}

// Kind implements river.JobArgs.
func (IntegrationEvent) Kind() string { return "integration.event" }

// InsertOpts puts parsing on the integrations queue, so a burst of pushes never delays
// audit or outgoing deliveries.
func (IntegrationEvent) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueIntegrations, MaxAttempts: 10}
}

// IncomingEventCleanup deletes processed incoming payloads older than Retention; the
// references parsed from them stay.
type IncomingEventCleanup struct {
	Retention time.Duration `json:"retention"`
}

// Kind implements river.JobArgs.
func (IncomingEventCleanup) Kind() string { return "integration.incoming_cleanup" }

// InsertOpts runs the cleanup on the integrations queue.
func (IncomingEventCleanup) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueIntegrations}
}
