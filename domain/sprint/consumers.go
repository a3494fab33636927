package sprint

import (
	"context"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
)

// Audit actions of the sprint events (WRITE level).
const (
	AuditStarted   = "SPRINT_STARTED"
	AuditCompleted = "SPRINT_COMPLETED"
)

// RegisterConsumers registers the sprint package's own consumers on the bus: the audit
// log. Webhooks, automation and the board push register theirs beside it.
func RegisterConsumers(bus *event.Bus, rec *audit.Recorder) {
	bus.Register(auditConsumer(rec), EventStarted, EventCompleted)
}

// auditConsumer turns a sprint event into an audit job when the WRITE level is on.
func auditConsumer(rec *audit.Recorder) event.Consumer {
	return func(ctx context.Context, tx bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
		var (
			action  string
			subject Subject
			by      By
			details any
		)
		switch e := ev.(type) {
		case Started:
			action, subject, by = AuditStarted, e.Subject, e.By
			details = map[string]any{"sprintName": e.SprintName, "issueCount": len(e.IssueIDs)}
		case Completed:
			action, subject, by = AuditCompleted, e.Subject, e.By
			details = map[string]any{"sprintName": e.SprintName, "issueCount": len(e.IssueIDs),
				"movedToBacklogCount": e.MovedToBacklogCount}
		default:
			return nil, nil
		}
		projectID := subject.ProjectID
		return rec.EventJobs(ctx, tx, audit.Entry{
			Action: action, UserID: by.ID, UserEmail: by.Email, ProjectID: &projectID,
			ResourceType: "SPRINT", ResourceID: subject.SprintID.String(), IPAddress: by.IP, UserAgent: by.UserAgent,
		}, details)
	}
}
