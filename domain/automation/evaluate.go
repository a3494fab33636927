package automation

import (
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Facts are the issue fields conditions test, read when the rule is evaluated.
type Facts struct {
	ProjectID   uuid.UUID
	Type        string
	Priority    string
	AssigneeID  *uuid.UUID
	StatusID    uuid.UUID
	StoryPoints *int
}

// value is the field a condition of type t tests, as text ("" when empty).
func (f Facts) value(t string) string {
	switch t {
	case CondIssueType:
		return f.Type
	case CondPriority:
		return f.Priority
	case CondAssignee:
		if f.AssigneeID == nil {
			return ""
		}
		return f.AssigneeID.String()
	case CondStatus:
		return f.StatusID.String()
	case CondStoryPoints:
		if f.StoryPoints == nil {
			return ""
		}
		return strconv.Itoa(*f.StoryPoints)
	case CondProject:
		return f.ProjectID.String()
	}
	return ""
}

// Matches evaluates the tree: AND needs every condition and sub-group true, OR any; a
// group with neither is true whatever its logic.
func (g Group) Matches(f Facts) bool {
	if len(g.Conditions) == 0 && len(g.Groups) == 0 {
		return true
	}
	or := g.Logic == LogicOr
	for _, c := range g.Conditions {
		if c.Matches(f) == or {
			return or
		}
	}
	for _, sub := range g.Groups {
		if sub.Matches(f) == or {
			return or
		}
	}
	return !or
}

// Matches evaluates one condition (docs/automation.md#conditions):
//   - IS and IS_NOT compare case-insensitively; ids compare as ids; STORY_POINTS
//     compares as numbers when both sides are numbers ("" is no story points).
//   - CONTAINS on ASSIGNEE, STATUS and PROJECT: the field's id is one of the
//     comma-separated ids of the value. On the other types: the field contains the
//     value, or is one of its comma-separated items, case-insensitively.
//   - GT and LT: both sides parse as numbers and compare so, else false.
//
// An unknown type or operator is false.
func (c Condition) Matches(f Facts) bool {
	actual := f.value(c.Type)
	want := strings.TrimSpace(c.Params["value"])
	switch c.Operator {
	case OpIs:
		return same(c.Type, actual, want)
	case OpIsNot:
		return !same(c.Type, actual, want)
	case OpContains:
		if actual == "" {
			return false
		}
		if !idCondition(c.Type) && strings.Contains(strings.ToLower(actual), strings.ToLower(want)) {
			return true
		}
		for _, item := range strings.Split(want, ",") {
			if strings.EqualFold(strings.TrimSpace(item), actual) {
				return true
			}
		}
		return false
	case OpGT, OpLT:
		a, ok1 := number(actual)
		b, ok2 := number(want)
		if !ok1 || !ok2 {
			return false
		}
		if c.Operator == OpGT {
			return a > b
		}
		return a < b
	}
	return false
}

// same is the equality IS tests.
func same(t, actual, want string) bool {
	if t == CondStoryPoints {
		a, ok1 := number(actual)
		b, ok2 := number(want)
		if ok1 && ok2 {
			return a == b
		}
	}
	return strings.EqualFold(actual, want)
}

// matchesPayload applies the rule's trigger filters: every key must equal the event's
// extra of that name (ids case-insensitively); no filter matches every event.
func (r *Rule) matchesPayload(extras map[string]string) bool {
	for k, v := range r.filters {
		if !strings.EqualFold(extras[k], v) {
			return false
		}
	}
	return true
}
