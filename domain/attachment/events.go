// Package attachment owns files attached to issues: the streamed upload into a Storage,
// the records, download and delete.
package attachment

import (
	"time"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/issue"
)

// Bus names of the attachment events.
const (
	EventAdded   = "attachment.added"
	EventRemoved = "attachment.removed"
)

// Added is published when a file has been stored and its record saved. Consumers:
// webhooks (attachment.added); the ATTACHMENT_ADDED activity row is written with it.
type Added struct {
	issue.Subject
	issue.By
	AttachmentID uuid.UUID `json:"attachmentId"`
	Filename     string    `json:"filename"`
	ContentType  string    `json:"contentType"`
	Size         int64     `json:"size"`
	At           time.Time `json:"at"`
}

// Removed is published when an attachment is deleted (no consumer, see
// docs/design.md#event-flow; the ATTACHMENT_REMOVED activity row is written with it).
type Removed struct {
	issue.Subject
	issue.By
	AttachmentID uuid.UUID `json:"attachmentId"`
	Filename     string    `json:"filename"`
	At           time.Time `json:"at"`
}

// EventName implements event.Event.
func (Added) EventName() string { return EventAdded }

// EventName implements event.Event.
func (Removed) EventName() string { return EventRemoved }
