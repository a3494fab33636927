// Package automation owns no-code automation rules: a trigger with key/value filters, a
// tree of AND/OR condition groups and ordered actions, scoped to one project or to every
// one (SYSTEM). Rules are stored relationally and validated whole when saved. Domain
// events with a trigger become one evaluation job each (consumer.go), in the
// transaction of the change; a worker evaluates the tree and runs the actions through
// the same domain services a request uses (engine.go, action.go), each rule in one
// transaction with its execution row, so a retried job never applies a rule twice.
// See docs/automation.md.
package automation

import (
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Scopes of a rule.
const (
	ScopeProject = "PROJECT"
	ScopeSystem  = "SYSTEM"
)

// Trigger types.
const (
	TriggerIssueCreated     = "ISSUE_CREATED"
	TriggerStatusChanged    = "STATUS_CHANGED"
	TriggerPriorityChanged  = "PRIORITY_CHANGED"
	TriggerAssigneeChanged  = "ASSIGNEE_CHANGED"
	TriggerCommentAdded     = "COMMENT_ADDED"
	TriggerSprintStarted    = "SPRINT_STARTED"
	TriggerSprintCompleted  = "SPRINT_COMPLETED"
	payloadKeyToStatusID    = "toStatusId"
	payloadKeyPriority      = "priority"
	defaultNotification     = "Automation rule fired"
	defaultSubtaskTitle     = "Auto-created subtask"
	executionDetailMaxRunes = 1000
)

// Condition types.
const (
	CondIssueType   = "ISSUE_TYPE"
	CondPriority    = "PRIORITY"
	CondAssignee    = "ASSIGNEE"
	CondStatus      = "STATUS"
	CondStoryPoints = "STORY_POINTS"
	CondProject     = "PROJECT"
)

// Operators.
const (
	OpIs       = "IS"
	OpIsNot    = "IS_NOT"
	OpContains = "CONTAINS"
	OpGT       = "GT"
	OpLT       = "LT"
)

// Group logics.
const (
	LogicAnd = "AND"
	LogicOr  = "OR"
)

// Action types.
const (
	ActionSetStatus        = "SET_STATUS"
	ActionSetAssignee      = "SET_ASSIGNEE"
	ActionSetPriority      = "SET_PRIORITY"
	ActionSendNotification = "SEND_NOTIFICATION"
	ActionCreateComment    = "CREATE_COMMENT"
	ActionCreateSubtask    = "CREATE_SUBTASK"
)

// Execution statuses.
const (
	StatusSuccess = "SUCCESS"
	StatusSkipped = "SKIPPED"
	StatusFailed  = "FAILED"
)

// The enumerations in their documented order (api/openapi/90-automation.yaml).
var (
	Triggers = []string{TriggerIssueCreated, TriggerStatusChanged, TriggerPriorityChanged, TriggerAssigneeChanged, TriggerCommentAdded, TriggerSprintStarted, TriggerSprintCompleted,
		TriggerScheduled}
	ConditionTypes = []string{CondIssueType, CondPriority, CondAssignee, CondStatus, CondStoryPoints, CondProject}
	Operators      = []string{OpIs, OpIsNot, OpContains, OpGT, OpLT}
	Logics         = []string{LogicAnd, LogicOr}
	// ExecutionStatuses filter the execution log.
	ExecutionStatuses = []string{StatusSuccess, StatusSkipped, StatusFailed}
	ActionTypes       = []string{ActionSetStatus, ActionSetAssignee, ActionSetPriority, ActionSendNotification, ActionCreateComment, ActionCreateSubtask,
		ActionSendWebhook}
)

// Limits against abuse: a rule deeper or larger is refused whole
// (docs/automation.md#limits).
const (
	// MaxDepth counts the root group as level 1.
	MaxDepth      = 20
	MaxConditions = 200
	MaxActions    = 50
	// MaxGroups bounds the groups of a tree, as MaxConditions bounds its leaves: empty
	// groups would otherwise be free to send by the thousand.
	MaxGroups = 200
	MaxName   = 255
	// MaxParam bounds one parameter value (a comment body's own limit).
	MaxParam = 50000
	// MaxChainDepth is how many rule-caused changes may follow each other: a change an
	// action made at depth 5 still triggers rules, their own changes do not.
	MaxChainDepth = 5
	// NotificationType is the type of SEND_NOTIFICATION's notifications.
	NotificationType = "AUTOMATION"
	// AuditFired is the audit action of a rule that ran its actions (WRITE level).
	AuditFired = "AUTOMATION_FIRED"
)

// Errors of the rule administration; api/ maps each to its status.
var (
	ErrNotFound = errors.New("automation: rule not found")
	// ErrCreatorIneligible refuses to enable a rule whose creator may not have it act
	// (deactivated, deleted, no longer a member, below MEMBER): an admin takes it over
	// instead.
	ErrCreatorIneligible = errors.New("automation: the rule's creator may not have it act; take it over instead")
)

// Audit actions of rule administration (WRITE level).
const (
	// AuditEnabled: a rule disabled because of its creator was enabled again.
	AuditEnabled = "AUTOMATION_RULE_ENABLED"
	// AuditTakenOver: an admin became the creator of a rule (and enabled it).
	AuditTakenOver = "AUTOMATION_RULE_TAKEN_OVER"
)

// Rule is a rule as it reads back: the tree and the actions exactly as written.
type Rule struct {
	ID             uuid.UUID
	ProjectID      *uuid.UUID
	Scope          string
	Name           string
	TriggerType    string
	TriggerPayload *string
	Enabled        bool
	CreatedBy      *uuid.UUID
	CreatedAt      time.Time
	// DisabledReason is why the rule was disabled because its creator may no longer
	// have it act, nil otherwise; DisabledAt is when.
	DisabledReason *string
	DisabledAt     *time.Time
	Root           Group
	Actions        []Action
	// Schedule, Timezone and Filter are a SCHEDULED rule's (nil otherwise): its cron
	// schedule, IANA zone and the JSON text of its issue filter. NextRunAt is its next
	// due slot while it is enabled.
	Schedule  *string
	Timezone  *string
	Filter    *string
	NextRunAt *time.Time

	// filters is TriggerPayload decoded, for evaluation.
	filters map[string]string
}

// Group is a node of the condition tree: AND needs every child true, OR any; a group
// without children is true.
type Group struct {
	ID         uuid.UUID
	Logic      string
	Conditions []Condition
	Groups     []Group
}

// Condition is one test of an issue field; Params["value"] is its operand.
type Condition struct {
	ID       uuid.UUID
	Type     string
	Operator string
	Params   map[string]string
}

// Action is one step of a rule, run in ascending Position (then request order).
type Action struct {
	ID       uuid.UUID
	Position int
	Type     string
	Params   map[string]string

	// index is the action's place in the create request, for the member paths of its
	// problems.
	index int
}

// Execution is one rule evaluated for one triggering event.
type Execution struct {
	ID     uuid.UUID
	RuleID uuid.UUID
	// RunID is the scheduled run the execution belongs to (nil for an event's).
	RunID     *uuid.UUID
	IssueID   *uuid.UUID
	EventType string
	Status    string
	Detail    *string
	CreatedAt time.Time
}

func valid(values []string, v string) bool { return slices.Contains(values, v) }
