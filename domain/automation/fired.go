package automation

import (
	"context"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
)

// EventFired is the bus name of Fired.
const EventFired = "automation.fired"

// Fired is published, in the rule's transaction, when a rule ran its actions on an
// issue. The audit log records it as AUTOMATION_FIRED (WRITE level).
type Fired struct {
	RuleID     uuid.UUID `json:"ruleId"`
	RuleName   string    `json:"ruleName"`
	ProjectID  uuid.UUID `json:"projectId"`
	IssueID    uuid.UUID `json:"issueId"`
	IssueKey   string    `json:"issueKey"`
	Trigger    string    `json:"trigger"`
	EventID    uuid.UUID `json:"eventId"`
	ChainDepth int       `json:"chainDepth"`
}

// EventName implements event.Event.
func (Fired) EventName() string { return EventFired }

// auditConsumer turns Fired into an AUTOMATION_FIRED audit job when the WRITE level is
// on. The actor is the system ('system' in the log): the rule acted, not a person.
func auditConsumer(rec *audit.Recorder) event.Consumer {
	return func(ctx context.Context, tx bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
		e, ok := ev.(Fired)
		if !ok {
			return nil, nil
		}
		projectID := e.ProjectID
		return rec.EventJobs(ctx, tx, audit.Entry{Action: AuditFired, ProjectID: &projectID,
			ResourceType: "AUTOMATION_RULE", ResourceID: e.RuleID.String()},
			map[string]any{"ruleName": e.RuleName, "issueKey": e.IssueKey, "issueId": e.IssueID, "trigger": e.Trigger,
				"eventId": e.EventID, "chainDepth": e.ChainDepth})
	}
}
