package webhook

// Event types a webhook can subscribe to (docs/api-conventions.md#events-and-webhooks).
// They are wire values: never translated, never renamed.
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

// EventTypes lists the subscribable types in the order the API documents them
// (api/openapi/50-webhooks.yaml).
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
