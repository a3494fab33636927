package webhook

import (
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/sprint"
)

// sprintData is the data member of sprint.started and sprint.completed
// (docs/api-conventions.md#events-and-webhooks).
type sprintData struct {
	SprintID   uuid.UUID `json:"sprintId"`
	SprintName string    `json:"sprintName"`
}

// SprintMessage maps sprint start and completion to their webhook messages.
func SprintMessage(ev event.Event) (Message, bool) {
	var (
		s   sprint.Subject
		typ string
		m   Message
	)
	switch e := ev.(type) {
	case sprint.Started:
		s, typ, m.At = e.Subject, EventSprintStarted, e.At
	case sprint.Completed:
		s, typ, m.At = e.Subject, EventSprintCompleted, e.At
	default:
		return Message{}, false
	}
	m.Type, m.ProjectID, m.ProjectKey = typ, s.ProjectID, s.ProjectKey
	m.Data = sprintData{SprintID: s.SprintID, SprintName: s.SprintName}
	return m, true
}
