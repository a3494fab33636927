package automation_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/automation"
)

var (
	project  = uuid.MustParse("11111111-1111-4111-8111-111111111111")
	assignee = uuid.MustParse("22222222-2222-4222-8222-222222222222")
	status   = uuid.MustParse("33333333-3333-4333-8333-333333333333")
	other    = uuid.MustParse("44444444-4444-4444-8444-444444444444")
)

// facts is a BUG of priority HIGH, assigned, in status, with 5 story points.
func facts() automation.Facts {
	points, a := 5, assignee
	return automation.Facts{ProjectID: project, Type: "BUG", Priority: "HIGH", AssigneeID: &a, StatusID: status, StoryPoints: &points}
}

func cond(typ, op, value string) automation.Condition {
	return automation.Condition{Type: typ, Operator: op, Params: map[string]string{"value": value}}
}

// TestConditionMatrix is every operator on every condition type, each with a case that
// holds and one that does not (GT and LT on a non-numeric type never hold).
func TestConditionMatrix(t *testing.T) {
	t.Parallel()
	up := strings.ToUpper
	cases := []struct {
		typ, op, value string
		want           bool
	}{
		{"ISSUE_TYPE", "IS", "bug", true},
		{"ISSUE_TYPE", "IS", "TASK", false},
		{"ISSUE_TYPE", "IS_NOT", "TASK", true},
		{"ISSUE_TYPE", "IS_NOT", "Bug", false},
		{"ISSUE_TYPE", "CONTAINS", "u", true},
		{"ISSUE_TYPE", "CONTAINS", "story, bug", true},
		{"ISSUE_TYPE", "CONTAINS", "TASK,STORY", false},
		{"ISSUE_TYPE", "GT", "1", false},
		{"ISSUE_TYPE", "LT", "1", false},

		{"PRIORITY", "IS", "high", true},
		{"PRIORITY", "IS", "LOW", false},
		{"PRIORITY", "IS_NOT", "LOW", true},
		{"PRIORITY", "IS_NOT", "HIGH", false},
		{"PRIORITY", "CONTAINS", "CRITICAL,HIGH", true},
		{"PRIORITY", "CONTAINS", "LOW", false},
		{"PRIORITY", "GT", "0", false},
		{"PRIORITY", "LT", "9", false},

		{"ASSIGNEE", "IS", up(assignee.String()), true},
		{"ASSIGNEE", "IS", other.String(), false},
		{"ASSIGNEE", "IS", "", false},
		{"ASSIGNEE", "IS_NOT", other.String(), true},
		{"ASSIGNEE", "IS_NOT", assignee.String(), false},
		{"ASSIGNEE", "CONTAINS", other.String() + ", " + assignee.String(), true},
		{"ASSIGNEE", "CONTAINS", other.String(), false},
		{"ASSIGNEE", "CONTAINS", assignee.String()[:8], false}, // ids compare whole, never as text
		{"ASSIGNEE", "GT", "1", false},
		{"ASSIGNEE", "LT", "1", false},

		{"STATUS", "IS", status.String(), true},
		{"STATUS", "IS", other.String(), false},
		{"STATUS", "IS_NOT", other.String(), true},
		{"STATUS", "IS_NOT", status.String(), false},
		{"STATUS", "CONTAINS", other.String() + "," + status.String(), true},
		{"STATUS", "CONTAINS", other.String(), false},
		{"STATUS", "GT", "1", false},
		{"STATUS", "LT", "1", false},

		{"STORY_POINTS", "IS", "5", true},
		{"STORY_POINTS", "IS", "5.0", true},
		{"STORY_POINTS", "IS", "3", false},
		{"STORY_POINTS", "IS_NOT", "3", true},
		{"STORY_POINTS", "IS_NOT", "5", false},
		{"STORY_POINTS", "CONTAINS", "3,5,8", true},
		{"STORY_POINTS", "CONTAINS", "8", false},
		{"STORY_POINTS", "GT", "4.5", true},
		{"STORY_POINTS", "GT", "5", false},
		{"STORY_POINTS", "GT", "many", false},
		{"STORY_POINTS", "LT", "8", true},
		{"STORY_POINTS", "LT", "5", false},

		{"PROJECT", "IS", project.String(), true},
		{"PROJECT", "IS", other.String(), false},
		{"PROJECT", "IS_NOT", other.String(), true},
		{"PROJECT", "IS_NOT", project.String(), false},
		{"PROJECT", "CONTAINS", project.String(), true},
		{"PROJECT", "CONTAINS", other.String(), false},
		{"PROJECT", "GT", "1", false},
		{"PROJECT", "LT", "1", false},

		{"UNKNOWN", "IS", "", true}, // an unknown type reads "": IS "" holds, as for an empty field
		{"ISSUE_TYPE", "MATCHES", "BUG", false},
	}
	f := facts()
	for _, c := range cases {
		require.Equal(t, c.want, cond(c.typ, c.op, c.value).Matches(f), "%s %s %q", c.typ, c.op, c.value)
	}
	// Every type meets every operator in the table.
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.typ+" "+c.op] = true
	}
	for _, typ := range automation.ConditionTypes {
		for _, op := range automation.Operators {
			require.True(t, seen[typ+" "+op], "%s %s has no case", typ, op)
		}
	}
}

// TestConditionsOnEmptyFields: no assignee and no story points read as "": IS "" holds,
// CONTAINS never does, GT and LT are false.
func TestConditionsOnEmptyFields(t *testing.T) {
	t.Parallel()
	f := facts()
	f.AssigneeID, f.StoryPoints = nil, nil
	for _, c := range []struct {
		c    automation.Condition
		want bool
	}{
		{cond("ASSIGNEE", "IS", ""), true},
		{cond("ASSIGNEE", "IS_NOT", ""), false},
		{cond("ASSIGNEE", "IS_NOT", assignee.String()), true},
		{cond("ASSIGNEE", "CONTAINS", assignee.String()), false},
		{cond("STORY_POINTS", "IS", ""), true},
		{cond("STORY_POINTS", "IS", "0"), false},
		{cond("STORY_POINTS", "GT", "-1"), false},
		{cond("STORY_POINTS", "LT", "1"), false},
		{cond("STORY_POINTS", "CONTAINS", "0"), false},
	} {
		require.Equal(t, c.want, c.c.Matches(f), "%s %s %q", c.c.Type, c.c.Operator, c.c.Params["value"])
	}
}

// TestGroups: AND needs all children, OR any; empty groups are true whatever their
// logic, at any depth; sub-groups count as children.
func TestGroups(t *testing.T) {
	t.Parallel()
	yes, no := cond("ISSUE_TYPE", "IS", "BUG"), cond("ISSUE_TYPE", "IS", "TASK")
	group := func(logic string, conds []automation.Condition, groups ...automation.Group) automation.Group {
		return automation.Group{Logic: logic, Conditions: conds, Groups: groups}
	}
	empty := func(logic string) automation.Group { return group(logic, nil) }
	cs := func(c ...automation.Condition) []automation.Condition { return c }
	f := facts()
	for name, c := range map[string]struct {
		g    automation.Group
		want bool
	}{
		"empty AND":                        {empty("AND"), true},
		"empty OR":                         {empty("OR"), true},
		"AND all true":                     {group("AND", cs(yes, yes)), true},
		"AND one false":                    {group("AND", cs(yes, no)), false},
		"OR one true":                      {group("OR", cs(no, yes)), true},
		"OR all false":                     {group("OR", cs(no, no)), false},
		"AND with a false sub-group":       {group("AND", cs(yes), group("OR", cs(no, no))), false},
		"AND with a true sub-group":        {group("AND", cs(yes), group("OR", cs(no, yes))), true},
		"OR saved by a sub-group":          {group("OR", cs(no), group("AND", cs(yes))), true},
		"OR of only empty sub-groups":      {group("OR", nil, empty("AND"), empty("OR")), true},
		"AND holding an empty group":       {group("AND", cs(yes), empty("OR")), true},
		"OR with an empty group is true":   {group("OR", cs(no), empty("AND")), true},
		"three levels, innermost false":    {group("AND", nil, group("AND", nil, group("AND", cs(yes, no)))), false},
		"three levels, innermost true":     {group("AND", nil, group("OR", cs(no), group("AND", cs(yes)))), true},
		"nested empty groups at any depth": {group("AND", nil, group("OR", nil, group("AND", nil, empty("OR")))), true},
	} {
		require.Equal(t, c.want, c.g.Matches(f), name)
	}
}
