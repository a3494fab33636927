package webhook

import (
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/event"
)

// Data members of comment.created and attachment.added
// (docs/api-conventions.md#events-and-webhooks).
type (
	commentData struct {
		IssueID   uuid.UUID `json:"issueId"`
		CommentID uuid.UUID `json:"commentId"`
	}
	attachmentData struct {
		AttachmentID uuid.UUID `json:"attachmentId"`
		Filename     string    `json:"filename"`
	}
)

// CommentMessage maps a created comment to its comment.created message.
func CommentMessage(ev event.Event) (Message, bool) {
	e, ok := ev.(comment.Created)
	if !ok {
		return Message{}, false
	}
	id := e.IssueID
	return Message{Type: EventCommentCreated, ProjectID: e.ProjectID, ProjectKey: e.ProjectKey, IssueID: &id, At: e.At,
		Data: commentData{IssueID: e.IssueID, CommentID: e.CommentID}}, true
}

// AttachmentMessage maps an added attachment to its attachment.added message.
func AttachmentMessage(ev event.Event) (Message, bool) {
	e, ok := ev.(attachment.Added)
	if !ok {
		return Message{}, false
	}
	id := e.IssueID
	return Message{Type: EventAttachmentAdded, ProjectID: e.ProjectID, ProjectKey: e.ProjectKey, IssueID: &id, At: e.At,
		Data: attachmentData{AttachmentID: e.AttachmentID, Filename: e.Filename}}, true
}
