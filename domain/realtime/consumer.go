package realtime

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/sprint"
)

// Board message types (docs/api-conventions.md#real-time).
const (
	TypeIssueMoved    = "ISSUE_MOVED"
	TypeSprintUpdated = "SPRINT_UPDATED"
)

// IssueMoved is the board message of a status change.
type IssueMoved struct {
	Type        string    `json:"type"`
	IssueID     uuid.UUID `json:"issueId"`
	NewStatusID uuid.UUID `json:"newStatusId"`
	ProjectKey  string    `json:"projectKey"`
}

// SprintUpdated is the board message of a sprint start or completion.
type SprintUpdated struct {
	Type       string    `json:"type"`
	SprintID   uuid.UUID `json:"sprintId"`
	ProjectKey string    `json:"projectKey"`
}

// Register subscribes the board push to the events it sends: every process whose bus
// publishes status changes or sprint transitions (API and workers, for automation)
// registers it, so no path that moves an issue misses the board.
func Register(bus *event.Bus) {
	bus.Register(Consumer, issue.EventStatusChanged, sprint.EventStarted, sprint.EventCompleted)
}

// Consumer publishes the board message of ev on its transaction and returns no jobs:
// NOTIFY is already "after commit", a job would only add latency.
func Consumer(ctx context.Context, tx bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
	m, ok, err := BoardMessage(ev)
	if err != nil || !ok {
		return nil, err
	}
	return nil, Publish(ctx, tx, m)
}

// BoardMessage maps an event to its board message; ok is false for other events.
func BoardMessage(ev event.Event) (m Message, ok bool, err error) {
	var (
		key  string
		body any
	)
	switch e := ev.(type) {
	case issue.StatusChanged:
		key, body = e.ProjectKey, IssueMoved{Type: TypeIssueMoved, IssueID: e.IssueID, NewStatusID: e.NewStatusID, ProjectKey: e.ProjectKey}
	case *issue.StatusChanged:
		return BoardMessage(*e)
	case sprint.Started:
		key, body = e.ProjectKey, SprintUpdated{Type: TypeSprintUpdated, SprintID: e.SprintID, ProjectKey: e.ProjectKey}
	case *sprint.Started:
		return BoardMessage(*e)
	case sprint.Completed:
		key, body = e.ProjectKey, SprintUpdated{Type: TypeSprintUpdated, SprintID: e.SprintID, ProjectKey: e.ProjectKey}
	case *sprint.Completed:
		return BoardMessage(*e)
	default:
		return Message{}, false, nil
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return Message{}, false, fmt.Errorf("board message: %w", err)
	}
	return Message{Destination: ProjectTopic(key), Body: raw}, true, nil
}
