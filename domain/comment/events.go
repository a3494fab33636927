// Package comment owns comments on issues: creation with mention resolution, the
// author-only edit with sanitized HTML, soft delete, the paged list and the activity feed.
package comment

import (
	"time"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/issue"
)

// EventCreated is the bus name of Created.
const EventCreated = "comment.created"

// Created is published when a comment is created (docs/design.md#event-flow). Consumers:
// audit (COMMENT_CREATED), webhooks (comment.created), notifications (COMMENT_MENTION,
// COMMENT_ADDED) and automation (COMMENT_ADDED). By.ID is nil for a system comment.
type Created struct {
	issue.Subject
	issue.By
	CommentID uuid.UUID `json:"commentId"`
	Body      string    `json:"body"`
	// Mentioned are the project members the body @mentions, resolved when the comment
	// was created, without duplicates and without the author.
	Mentioned []uuid.UUID `json:"mentioned"`
	At        time.Time   `json:"at"`
	// Automated is set on a comment an automation rule's CREATE_COMMENT wrote: it
	// triggers no COMMENT_ADDED rule, so rules cannot comment in a loop.
	Automated bool `json:"automated,omitempty"`
}

// EventName implements event.Event.
func (Created) EventName() string { return EventCreated }
