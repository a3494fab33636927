package issue

import (
	"context"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
)

// Audit actions of the issue events (all WRITE level).
const (
	AuditCreated      = "ISSUE_CREATED"
	AuditUpdated      = "ISSUE_UPDATED"
	AuditTransitioned = "ISSUE_TRANSITIONED"
	AuditDeleted      = "ISSUE_DELETED"
)

// RegisterConsumers registers the issue package's own consumers on the bus: the audit
// log. Webhooks, automation and board push register theirs beside it.
func RegisterConsumers(bus *event.Bus, rec *audit.Recorder) {
	bus.Register(auditConsumer(rec), EventCreated, EventStatusChanged, EventFieldChanged, EventDeleted)
	bus.RegisterPrefetch(audit.LevelPrefetch(audit.LevelWrite), EventCreated, EventStatusChanged, EventFieldChanged, EventDeleted)
}

// auditConsumer turns an issue event into an audit job when the WRITE level is on.
func auditConsumer(rec *audit.Recorder) event.Consumer {
	return func(ctx context.Context, tx bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
		var (
			action  string
			subject Subject
			by      By
			details any
		)
		switch e := ev.(type) {
		case Created:
			action, subject, by = AuditCreated, e.Subject, e.By
			details = map[string]any{"issueKey": e.IssueKey, "title": e.Title, "type": e.Type, "priority": e.Priority}
		case StatusChanged:
			action, subject, by = AuditTransitioned, e.Subject, e.By
			details = map[string]any{"issueKey": e.IssueKey, "oldStatus": e.OldStatusName, "newStatus": e.NewStatusName,
				"oldStatusId": e.OldStatusID, "newStatusId": e.NewStatusID}
		case FieldChanged:
			action, subject, by = AuditUpdated, e.Subject, e.By
			m := map[string]any{"issueKey": e.IssueKey, "field": e.Field, "oldValue": e.OldValue, "newValue": e.NewValue}
			if e.CustomFieldID != nil {
				m["customFieldId"], m["customFieldName"] = e.CustomFieldID, e.CustomFieldName
			}
			details = m
		case Deleted:
			action, subject, by = AuditDeleted, e.Subject, e.By
			details = map[string]any{"issueKey": e.IssueKey, "title": e.Title}
		default:
			return nil, nil
		}
		projectID := subject.ProjectID
		return rec.EventJobs(ctx, tx, audit.Entry{
			Action: action, UserID: by.ID, UserEmail: by.Email, ProjectID: &projectID,
			ResourceType: "ISSUE", ResourceID: subject.IssueID.String(), IPAddress: by.IP, UserAgent: by.UserAgent,
		}, details)
	}
}
