// Package issue owns issues: creation with project-local keys, the partial update with
// its workflow, SLA and activity rules, deletion, and the filtered list. Every change
// commits its rows, its activity entries and the jobs of its domain events in one
// transaction.
package issue

import (
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/store"
)

// Issue types.
const (
	TypeEpic    = "EPIC"
	TypeStory   = "STORY"
	TypeBug     = "BUG"
	TypeTask    = "TASK"
	TypeSubtask = "SUBTASK"
)

// Priorities.
const (
	PriorityCritical = "CRITICAL"
	PriorityHigh     = "HIGH"
	PriorityMedium   = "MEDIUM"
	PriorityLow      = "LOW"
)

// Types and Priorities list the accepted values in display order.
var (
	Types      = []string{TypeEpic, TypeStory, TypeBug, TypeTask, TypeSubtask}
	Priorities = []string{PriorityCritical, PriorityHigh, PriorityMedium, PriorityLow}
)

// Limits of issue members.
const (
	// MaxStoryPoints bounds storyPoints (0–1000), as the column's check does.
	MaxStoryPoints = 1000
	MaxTitle       = 255
)

// Version assignment kinds.
const (
	VersionFix     = "FIX"
	VersionAffects = "AFFECTS"
)

// Errors of the issue rules; api/ maps each to its status (docs/api-conventions.md#errors).
var (
	ErrNotFound           = errors.New("issue: not found")
	ErrAssigneeNotMember  = errors.New("issue: assignee is not a member of the project")
	ErrParentNotFound     = errors.New("issue: parent not found in this project")
	ErrSubtaskNeedsParent = errors.New("issue: a SUBTASK needs a parent")
	ErrSprintNotFound     = errors.New("issue: sprint not found")
	ErrSprintNotInProject = errors.New("issue: sprint belongs to another project")
	ErrSprintClosed       = errors.New("issue: sprint is closed")
)

// Valid reports whether v is one of values.
func Valid(values []string, v string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

// Project is what the issue rules need of the project in the path.
type Project struct {
	ID         uuid.UUID
	Key        string
	WorkflowID *uuid.UUID
}

// Actor is who makes a change: the audit log's identity (user, e-mail, IP, user agent),
// the display name, and MemberRole, the explicit project role ("" = none) that workflow
// role guards look at.
type Actor struct {
	audit.Actor
	DisplayName string
	MemberRole  string
}

// NewIssue is a validated create request.
type NewIssue struct {
	Title       string
	Description *string
	Type        string
	Priority    string
	AssigneeID  *uuid.UUID
	ParentID    *uuid.UUID
	// ParentKey names the parent by its key instead (the API takes either); the create
	// reads its id, ErrParentNotFound when the project has no such issue.
	ParentKey   string
	SprintID    *uuid.UUID
	StoryPoints *int
	DueDate     *time.Time
	// LabelIDs of another project are dropped silently.
	LabelIDs []uuid.UUID
	// CustomFieldValues are checked against the project's custom fields.
	CustomFieldValues []customfield.Input
	// RequireCustomFields asks for a value of every required custom field: set by
	// callers that show the person a form (the API); tickets from mail and automation
	// cannot ask anyone, and leave them empty.
	RequireCustomFields bool
}

// Patch is a validated partial update: nil leaves a field unchanged, the Clear flags
// empty one (a clear flag wins over a value sent with it). The id lists are nil when
// absent, empty to clear, else the new set (ids of another project are dropped).
type Patch struct {
	Title       *string
	Description *string
	StatusID    *uuid.UUID
	AssigneeID  *uuid.UUID
	Priority    *string
	StoryPoints *int
	Type        *string
	DueDate     *time.Time
	SprintID    *uuid.UUID

	ClearAssignee    bool
	ClearStoryPoints bool
	ClearDueDate     bool
	ClearSprint      bool

	LabelIDs          *[]uuid.UUID
	FixVersionIDs     *[]uuid.UUID
	AffectsVersionIDs *[]uuid.UUID

	// CustomFieldValues are the custom field values to set (nil Value: remove); nil
	// changes none. A required field may not lose its value; one left empty from before
	// it became required is not asked for.
	CustomFieldValues []customfield.Input
}

// LabelRef is a label as an issue shows it.
type LabelRef struct {
	ID    uuid.UUID `bun:"id"`
	Name  string    `bun:"name"`
	Color string    `bun:"color"`
}

// VersionRef is a version as an issue shows it.
type VersionRef struct {
	ID   uuid.UUID `bun:"id"`
	Name string    `bun:"name"`
}

// View is an issue with the names its response shows.
type View struct {
	store.Issue `bun:",extend"`

	ProjectKey     string  `bun:"-"`
	StatusName     string  `bun:"status_name"`
	StatusCategory string  `bun:"status_category"`
	AssigneeName   *string `bun:"assignee_name"`
	ReporterName   string  `bun:"reporter_name"`
	SprintName     *string `bun:"sprint_name"`
	// ImportedKey is the key the issue had where an import brought it from ("JIRA-12",
	// "#7"), nil for an issue created here; reads through RowColumns fill it.
	ImportedKey *string `bun:"-"`

	Labels          []LabelRef   `bun:"-"`
	FixVersions     []VersionRef `bun:"-"`
	AffectsVersions []VersionRef `bun:"-"`
	// CustomFields holds every custom field of the project with the issue's value, in
	// the fields' order, where the read loads them (nil elsewhere).
	CustomFields []customfield.FieldValue `bun:"-"`
	// ViewAudited is set by Get when the audit level ALL is on: the read is to be
	// recorded as ISSUE_VIEWED. Get reads the toggle with the issue, so a read with the
	// level off costs no statement more.
	ViewAudited bool `bun:"view_audited"`
	// Highlight is a searched list's snippet of the row's text, HTML-escaped with each
	// match in <mark> (Highlight); nil elsewhere.
	Highlight *string `bun:"-"`
}

// dateString renders a plain date, or "" for none.
func dateString(d *time.Time) string {
	if d == nil {
		return ""
	}
	return d.Format(time.DateOnly)
}
