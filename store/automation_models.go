package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// AutomationUserID is the built-in automation user (migration 0031): the author and
// actor of what automation rules write. It cannot sign in and no list of accounts
// shows it (its deleted_at is set); display name "Automation".
var AutomationUserID = uuid.MustParse("00000000-0000-4000-8000-00000000a070")

// AutomationRule is a row of automation_rules: a trigger, a condition tree (its groups
// and conditions) and ordered actions, of one project or (ProjectID nil) of every one.
type AutomationRule struct {
	bun.BaseModel `bun:"table:automation_rules"`

	ID             uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID      *uuid.UUID `bun:"project_id,type:uuid"`
	Scope          string     `bun:"scope"`
	Name           string     `bun:"name"`
	TriggerType    string     `bun:"trigger_type"`
	TriggerPayload *string    `bun:"trigger_payload"`
	Enabled        bool       `bun:"enabled"`
	CreatedBy      *uuid.UUID `bun:"created_by,type:uuid"`
	CreatedAt      time.Time  `bun:"created_at,nullzero,default:clock_timestamp()"`
	// DisabledReason says why the rule was disabled because its creator may no longer
	// have it act (nil otherwise), DisabledAt when.
	DisabledReason *string    `bun:"disabled_reason"`
	DisabledAt     *time.Time `bun:"disabled_at"`
	// Schedule, Timezone and Filter are a SCHEDULED rule's (migration 0042).
	Schedule *string `bun:"schedule"`
	Timezone *string `bun:"timezone"`
	Filter   *string `bun:"filter"`
}

// AutomationGroup is a row of automation_groups: an AND/OR node of a rule's condition
// tree; the root has no parent.
type AutomationGroup struct {
	bun.BaseModel `bun:"table:automation_groups"`

	ID            uuid.UUID  `bun:"id,pk,type:uuid"`
	RuleID        uuid.UUID  `bun:"rule_id,type:uuid"`
	ParentGroupID *uuid.UUID `bun:"parent_group_id,type:uuid"`
	Logic         string     `bun:"logic"`
	Ordinal       int        `bun:"ordinal,notnull"`
}

// AutomationCondition is a row of automation_conditions: one test of a group.
type AutomationCondition struct {
	bun.BaseModel `bun:"table:automation_conditions"`

	ID       uuid.UUID         `bun:"id,pk,type:uuid"`
	RuleID   uuid.UUID         `bun:"rule_id,type:uuid"`
	GroupID  uuid.UUID         `bun:"group_id,type:uuid"`
	Ordinal  int               `bun:"ordinal,notnull"`
	Type     string            `bun:"type"`
	Operator string            `bun:"operator"`
	Params   map[string]string `bun:"params,type:jsonb"`
}

// AutomationAction is a row of automation_actions: one step, run in Position order.
type AutomationAction struct {
	bun.BaseModel `bun:"table:automation_actions"`

	ID       uuid.UUID         `bun:"id,pk,type:uuid"`
	RuleID   uuid.UUID         `bun:"rule_id,type:uuid"`
	Position int               `bun:"position,notnull"`
	Ordinal  int               `bun:"ordinal,notnull"`
	Type     string            `bun:"type"`
	Params   map[string]string `bun:"params,type:jsonb"`
}

// AutomationExecution is a row of automation_executions: one rule evaluated for one
// triggering event, unique per (EventID, RuleID).
type AutomationExecution struct {
	bun.BaseModel `bun:"table:automation_executions"`

	ID         uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	RuleID     uuid.UUID  `bun:"rule_id,type:uuid"`
	EventID    uuid.UUID  `bun:"event_id,type:uuid"`
	ProjectID  *uuid.UUID `bun:"project_id,type:uuid"`
	IssueID    *uuid.UUID `bun:"issue_id,type:uuid"`
	EventType  string     `bun:"event_type"`
	Status     string     `bun:"status"`
	Detail     *string    `bun:"detail"`
	ChainDepth int        `bun:"chain_depth,notnull"`
	EventAt    *time.Time `bun:"event_at"`
	CreatedAt  time.Time  `bun:"created_at,nullzero,default:clock_timestamp()"`
	RunID      *uuid.UUID `bun:"run_id,type:uuid"`
}
