// Package sprint owns sprints: their PLANNED → ACTIVE → CLOSED life, the issues they
// hold, and the events their start and completion publish.
package sprint

import (
	"time"

	"github.com/google/uuid"
)

// Event names, the keys consumers register under on the event bus. They are also the
// webhook event types.
const (
	EventStarted   = "sprint.started"
	EventCompleted = "sprint.completed"
)

// Subject names the sprint an event is about, with its project, so consumers (audit,
// webhooks, board push, automation) need not read it again.
type Subject struct {
	ProjectID  uuid.UUID `json:"projectId"`
	ProjectKey string    `json:"projectKey"`
	SprintID   uuid.UUID `json:"sprintId"`
	SprintName string    `json:"sprintName"`
}

// By is who caused an event; ID is nil for a system change (audit then says 'system').
type By struct {
	ID        *uuid.UUID `json:"actorId"`
	Email     string     `json:"actorEmail"`
	IP        string     `json:"-"`
	UserAgent string     `json:"-"`
}

// Started is published when a sprint becomes ACTIVE.
type Started struct {
	Subject
	By
	// IssueIDs are the sprint's issues at the start (automation fires once per issue).
	IssueIDs []uuid.UUID `json:"issueIds"`
	At       time.Time   `json:"at"`
}

// Completed is published when a sprint is CLOSED.
type Completed struct {
	Subject
	By
	MovedToBacklogCount int `json:"movedToBacklogCount"`
	// IssueIDs are the sprint's issues at completion, before the unfinished ones moved to
	// the backlog (automation fires once per issue).
	IssueIDs []uuid.UUID `json:"issueIds"`
	At       time.Time   `json:"at"`
}

// EventName implements event.Event.
func (Started) EventName() string { return EventStarted }

// EventName implements event.Event.
func (Completed) EventName() string { return EventCompleted }
