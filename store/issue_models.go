package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Issue is a row of issues. Number is the project-local sequence behind Key (KEY-Number).
type Issue struct {
	bun.BaseModel `bun:"table:issues,alias:i"`

	ID           uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID    uuid.UUID  `bun:"project_id,type:uuid"`
	Number       int        `bun:"number"`
	Key          string     `bun:"key"`
	Title        string     `bun:"title"`
	Description  *string    `bun:"description"`
	Type         string     `bun:"type"`
	Priority     string     `bun:"priority"`
	StoryPoints  *int       `bun:"story_points"`
	StatusID     uuid.UUID  `bun:"status_id,type:uuid"`
	AssigneeID   *uuid.UUID `bun:"assignee_id,type:uuid"`
	ReporterID   uuid.UUID  `bun:"reporter_id,type:uuid"`
	ParentID     *uuid.UUID `bun:"parent_id,type:uuid"`
	DueDate      *time.Time `bun:"due_date,type:date"`
	SprintID     *uuid.UUID `bun:"sprint_id,type:uuid"`
	SLAStartTime *time.Time `bun:"sla_start_time"`
	CreatedAt    time.Time  `bun:"created_at,nullzero,default:clock_timestamp()"`
	UpdatedAt    time.Time  `bun:"updated_at,nullzero,default:clock_timestamp()"`
}

// IssueLabel ties an issue to a label of its project.
type IssueLabel struct {
	bun.BaseModel `bun:"table:issue_labels"`

	IssueID uuid.UUID `bun:"issue_id,pk,type:uuid"`
	LabelID uuid.UUID `bun:"label_id,pk,type:uuid"`
}

// Version is a row of versions: a release of a project, unique by name.
type Version struct {
	bun.BaseModel `bun:"table:versions"`

	ID        uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID uuid.UUID `bun:"project_id,type:uuid"`
	Name      string    `bun:"name"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:now()"`
}

// IssueVersion assigns a version to an issue as a FIX or AFFECTS version.
type IssueVersion struct {
	bun.BaseModel `bun:"table:issue_versions"`

	IssueID   uuid.UUID `bun:"issue_id,pk,type:uuid"`
	VersionID uuid.UUID `bun:"version_id,pk,type:uuid"`
	Type      string    `bun:"type,pk"`
}

// IssueActivity is one entry of an issue's activity feed; values are display strings.
type IssueActivity struct {
	bun.BaseModel `bun:"table:issue_activities"`

	ID        uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	IssueID   uuid.UUID  `bun:"issue_id,type:uuid"`
	ActorID   uuid.UUID  `bun:"actor_id,type:uuid"`
	Type      string     `bun:"type"`
	CommentID *uuid.UUID `bun:"comment_id,type:uuid"`
	OldValue  *string    `bun:"old_value"`
	NewValue  *string    `bun:"new_value"`
	// NewStatusID is the status a STATUS_CHANGED entry moved to (reports resolve its
	// category by id); nil for other types.
	NewStatusID *uuid.UUID `bun:"new_status_id,type:uuid"`
	CreatedAt   time.Time  `bun:"created_at,nullzero,default:clock_timestamp()"`
	// RuleID and RuleCreatorID name the automation rule (and its creator) whose
	// transaction wrote the entry; the columns' defaults fill them (migration 0031).
	RuleID        *uuid.UUID `bun:"rule_id,type:uuid,scanonly"`
	RuleCreatorID *uuid.UUID `bun:"rule_creator_id,type:uuid,scanonly"`
}
