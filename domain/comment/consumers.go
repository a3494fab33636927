package comment

import (
	"context"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
)

// RegisterConsumers registers the comment package's own consumers (audit COMMENT_CREATED).
// Webhooks (comment.created) and notifications register theirs beside it.
func RegisterConsumers(bus *event.Bus, rec *audit.Recorder) {
	bus.Register(auditConsumer(rec), EventCreated)
}

// auditConsumer turns a created comment into an audit job when the WRITE level is on.
// The body stays out of the audit row: it is user content, not an action's detail.
func auditConsumer(rec *audit.Recorder) event.Consumer {
	return func(ctx context.Context, tx bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
		e, ok := ev.(Created)
		if !ok {
			return nil, nil
		}
		projectID := e.ProjectID
		return rec.EventJobs(ctx, tx, audit.Entry{
			Action: AuditCreated, UserID: e.By.ID, UserEmail: e.By.Email, ProjectID: &projectID,
			ResourceType: "COMMENT", ResourceID: e.CommentID.String(), IPAddress: e.By.IP, UserAgent: e.By.UserAgent,
		}, auditDetails(e.IssueKey, e.IssueID))
	}
}
