package webhook

// Event types a webhook can subscribe to (CONTRACT §11). They are wire values: never
// translated, never renamed.
const (
	EventIssueCreated       = "issue.created"
	EventIssueUpdated       = "issue.updated"
	EventIssueStatusChanged = "issue.status_changed"
	EventIssueAssigned      = "issue.assigned"
	EventIssueDeleted       = "issue.deleted"
	EventSprintStarted      = "sprint.started"
	EventSprintCompleted    = "sprint.completed"
	EventCommentCreated     = "comment.created"
	EventAttachmentAdded    = "attachment.added"
	// EventPing is the test delivery's type; no webhook subscribes to it.
	EventPing = "ping"
)

// EventTypes lists the subscribable types in the CONTRACT's order.
var EventTypes = []string{
	EventIssueCreated, EventIssueUpdated, EventIssueStatusChanged, EventIssueAssigned, EventIssueDeleted,
	EventSprintStarted, EventSprintCompleted, EventCommentCreated, EventAttachmentAdded,
}

// ValidEvent reports whether a webhook may subscribe to t.
func ValidEvent(t string) bool {
	for _, e := range EventTypes {
		if e == t {
			return true
		}
	}
	return false
}
