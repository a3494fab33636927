package issue

import (
	"time"

	"github.com/google/uuid"
)

// Event names, the keys consumers register under on the event bus.
const (
	EventCreated       = "issue.created"
	EventStatusChanged = "issue.status_changed"
	EventFieldChanged  = "issue.field_changed"
	EventDeleted       = "issue.deleted"
)

// Field names of FieldChanged. Type has no activity type
// (docs/api-conventions.md#issues): activity skips it, audit and webhooks treat it as any
// other update.
const (
	FieldTitle           = "title"
	FieldDescription     = "description"
	FieldPriority        = "priority"
	FieldStoryPoints     = "storyPoints"
	FieldDueDate         = "dueDate"
	FieldSprint          = "sprint"
	FieldAssignee        = "assignee"
	FieldFixVersions     = "fixVersions"
	FieldAffectsVersions = "affectsVersions"
	FieldLabels          = "labels"
	FieldType            = "type"
)

// Subject names the issue an event is about, with its project, so consumers (audit,
// webhooks, automation, board push) need not read the issue again.
type Subject struct {
	ProjectID  uuid.UUID `json:"projectId"`
	ProjectKey string    `json:"projectKey"`
	IssueID    uuid.UUID `json:"issueId"`
	IssueKey   string    `json:"issueKey"`
	Title      string    `json:"title"`
}

// By is who caused an event; ID is nil for a system change (audit then says 'system').
type By struct {
	ID        *uuid.UUID `json:"actorId"`
	Email     string     `json:"actorEmail"`
	IP        string     `json:"-"`
	UserAgent string     `json:"-"`
}

func byActor(a Actor) By {
	id := a.UserID
	return By{ID: &id, Email: a.Email, IP: a.IP, UserAgent: a.UserAgent}
}

// Created is published when an issue is created.
type Created struct {
	Subject
	By
	Type       string     `json:"type"`
	Priority   string     `json:"priority"`
	StatusID   uuid.UUID  `json:"statusId"`
	StatusName string     `json:"statusName"`
	AssigneeID *uuid.UUID `json:"assigneeId"`
	ReporterID uuid.UUID  `json:"reporterId"`
	ParentID   *uuid.UUID `json:"parentId"`
	At         time.Time  `json:"at"`
}

// StatusChanged is published when an issue moves to another status.
type StatusChanged struct {
	Subject
	By
	OldStatusID       uuid.UUID `json:"oldStatusId"`
	OldStatusName     string    `json:"oldStatus"`
	OldStatusCategory string    `json:"oldStatusCategory"`
	NewStatusID       uuid.UUID `json:"newStatusId"`
	NewStatusName     string    `json:"newStatus"`
	NewStatusCategory string    `json:"newStatusCategory"`
	At                time.Time `json:"at"`
}

// FieldChanged is published once per changed field. OldValue and NewValue are display
// strings ("" when empty): names for assignee and sprint, YYYY-MM-DD for dueDate,
// comma-separated names for the sets. OldRaw and NewRaw are the machine values: ids for
// assignee and sprint, comma-separated ids for the sets, else the same as the display.
type FieldChanged struct {
	Subject
	By
	Field    string    `json:"field"`
	OldValue string    `json:"oldValue"`
	NewValue string    `json:"newValue"`
	OldRaw   string    `json:"oldRaw"`
	NewRaw   string    `json:"newRaw"`
	At       time.Time `json:"at"`
	// CustomFieldID and CustomFieldName name the field of a FieldCustomField change;
	// its OldRaw/NewRaw are option ids for a DROPDOWN, else as OldValue/NewValue.
	CustomFieldID   *uuid.UUID `json:"customFieldId,omitempty"`
	CustomFieldName string     `json:"customFieldName,omitempty"`
}

// Deleted is published for a deleted issue, and for each subtask deleted with it.
type Deleted struct {
	Subject
	By
	At time.Time `json:"at"`
}

// EventName implements event.Event.
func (Created) EventName() string { return EventCreated }

// EventName implements event.Event.
func (StatusChanged) EventName() string { return EventStatusChanged }

// EventName implements event.Event.
func (FieldChanged) EventName() string { return EventFieldChanged }

// EventName implements event.Event.
func (Deleted) EventName() string { return EventDeleted }
