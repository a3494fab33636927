package workflow_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/workflow"
)

// full is an issue with every checkable field filled.
func full() workflow.IssueFields {
	return workflow.IssueFields{
		Title: "Login fails", Description: ptr("Steps: ..."), AssigneeID: ptr(uuid.New()),
		StoryPoints: ptr(3), DueDate: ptr(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)),
	}
}

func without(change func(*workflow.IssueFields)) workflow.IssueFields {
	f := full()
	change(&f)
	return f
}

// rule is one transition row of a case: from "" = from any status.
type rule struct {
	from, to, guards string
}

func TestCheckStatusChange(t *testing.T) {
	t.Parallel()
	const (
		requireAssignee = `[{"type":"REQUIRED_FIELD","field":"assigneeId"}]`
		adminsOnly      = `[{"type":"ROLE_RESTRICTION","roles":["ADMIN"]}]`
	)
	fieldGuard := func(f string) string { return `[{"type":"REQUIRED_FIELD","field":"` + f + `"}]` }
	cases := []struct {
		name     string
		rules    []rule
		from, to string
		fields   workflow.IssueFields
		role     string
		want     error // nil = allowed; a *GuardError is compared by value
	}{
		{name: "no transitions: any change", from: "todo", to: "done", role: "MEMBER"},
		{name: "no transitions: backwards, empty fields, no role", from: "done", to: "todo", fields: workflow.IssueFields{}},
		{name: "matching transition", rules: []rule{{"todo", "prog", ""}}, from: "todo", to: "prog", role: "VIEWER"},
		{name: "transition from another status", rules: []rule{{"todo", "prog", ""}}, from: "done", to: "prog",
			role: "ADMIN", want: workflow.ErrTransitionNotAllowed},
		{name: "transition to another status", rules: []rule{{"todo", "prog", ""}}, from: "todo", to: "done",
			role: "ADMIN", want: workflow.ErrTransitionNotAllowed},
		{name: "reverse direction is not implied", rules: []rule{{"todo", "prog", ""}}, from: "prog", to: "todo",
			role: "ADMIN", want: workflow.ErrTransitionNotAllowed},
		{name: "from any status", rules: []rule{{"", "done", ""}}, from: "prog", to: "done", role: "MEMBER"},
		{name: "from any status, other start", rules: []rule{{"", "done", ""}}, from: "todo", to: "done", role: "MEMBER"},
		{name: "from any status still needs the target", rules: []rule{{"", "done", ""}}, from: "todo", to: "prog",
			role: "MEMBER", want: workflow.ErrTransitionNotAllowed},
		{name: "guards null", rules: []rule{{"todo", "prog", "null"}}, from: "todo", to: "prog"},
		{name: "guards empty", rules: []rule{{"todo", "prog", "[]"}}, from: "todo", to: "prog"},

		{name: "required title blank", rules: []rule{{"todo", "prog", fieldGuard("title")}}, from: "todo", to: "prog",
			fields: without(func(f *workflow.IssueFields) { f.Title = "  " }), role: "ADMIN", want: &workflow.GuardError{Field: "title"}},
		{name: "required description null", rules: []rule{{"todo", "prog", fieldGuard("description")}}, from: "todo", to: "prog",
			fields: without(func(f *workflow.IssueFields) { f.Description = nil }), role: "ADMIN", want: &workflow.GuardError{Field: "description"}},
		{name: "required description blank", rules: []rule{{"todo", "prog", fieldGuard("description")}}, from: "todo", to: "prog",
			fields: without(func(f *workflow.IssueFields) { f.Description = ptr(" \n") }), role: "ADMIN", want: &workflow.GuardError{Field: "description"}},
		{name: "required assignee null", rules: []rule{{"todo", "prog", requireAssignee}}, from: "todo", to: "prog",
			fields: without(func(f *workflow.IssueFields) { f.AssigneeID = nil }), role: "ADMIN", want: &workflow.GuardError{Field: "assigneeId"}},
		{name: "required story points null", rules: []rule{{"todo", "prog", fieldGuard("storyPoints")}}, from: "todo", to: "prog",
			fields: without(func(f *workflow.IssueFields) { f.StoryPoints = nil }), role: "ADMIN", want: &workflow.GuardError{Field: "storyPoints"}},
		{name: "required due date null", rules: []rule{{"todo", "prog", fieldGuard("dueDate")}}, from: "todo", to: "prog",
			fields: without(func(f *workflow.IssueFields) { f.DueDate = nil }), role: "ADMIN", want: &workflow.GuardError{Field: "dueDate"}},
		{name: "required fields present", from: "todo", to: "prog", fields: full(), role: "VIEWER", rules: []rule{{"todo", "prog",
			`[{"type":"REQUIRED_FIELD","field":"title"},{"type":"REQUIRED_FIELD","field":"description"},` +
				`{"type":"REQUIRED_FIELD","field":"assigneeId"},{"type":"REQUIRED_FIELD","field":"storyPoints"},` +
				`{"type":"REQUIRED_FIELD","field":"dueDate"}]`}}},
		{name: "zero story points count as set", rules: []rule{{"todo", "prog", fieldGuard("storyPoints")}}, from: "todo", to: "prog",
			fields: without(func(f *workflow.IssueFields) { f.StoryPoints = ptr(0) })},
		{name: "required field on a from-any transition", rules: []rule{{"", "done", requireAssignee}}, from: "prog", to: "done",
			role: "ADMIN", want: &workflow.GuardError{Field: "assigneeId"}},

		{name: "role allowed", rules: []rule{{"todo", "prog", adminsOnly}}, from: "todo", to: "prog", role: "ADMIN"},
		{name: "role MEMBER refused", rules: []rule{{"todo", "prog", adminsOnly}}, from: "todo", to: "prog",
			role: "MEMBER", want: &workflow.GuardError{Role: "MEMBER"}},
		{name: "role VIEWER refused", rules: []rule{{"todo", "prog", adminsOnly}}, from: "todo", to: "prog",
			role: "VIEWER", want: &workflow.GuardError{Role: "VIEWER"}},
		{name: "no member row is NONE", rules: []rule{{"todo", "prog", adminsOnly}}, from: "todo", to: "prog",
			role: "", want: &workflow.GuardError{Role: "NONE"}},
		{name: "NONE may be allowed", rules: []rule{{"todo", "prog", `[{"type":"ROLE_RESTRICTION","roles":["NONE","VIEWER"]}]`}},
			from: "todo", to: "prog", role: ""},
		{name: "VIEWER allowed by list", rules: []rule{{"todo", "prog", `[{"type":"ROLE_RESTRICTION","roles":["MEMBER","VIEWER"]}]`}},
			from: "todo", to: "prog", role: "VIEWER"},
		{name: "ADMIN not implied by MEMBER", rules: []rule{{"todo", "prog", `[{"type":"ROLE_RESTRICTION","roles":["MEMBER"]}]`}},
			from: "todo", to: "prog", role: "ADMIN", want: &workflow.GuardError{Role: "ADMIN"}},
		{name: "empty role list blocks everyone", rules: []rule{{"todo", "prog", `[{"type":"ROLE_RESTRICTION","roles":[]}]`}},
			from: "todo", to: "prog", role: "ADMIN", want: &workflow.GuardError{Role: "ADMIN"}},
		{name: "first failing guard of a transition is reported", from: "todo", to: "prog", role: "MEMBER",
			fields: without(func(f *workflow.IssueFields) { f.AssigneeID = nil }),
			rules:  []rule{{"todo", "prog", `[{"type":"ROLE_RESTRICTION","roles":["ADMIN"]},{"type":"REQUIRED_FIELD","field":"assigneeId"}]`}},
			want:   &workflow.GuardError{Role: "MEMBER"}},
		{name: "all guards of a transition must pass", from: "todo", to: "prog", role: "ADMIN",
			fields: without(func(f *workflow.IssueFields) { f.AssigneeID = nil }),
			rules:  []rule{{"todo", "prog", `[{"type":"ROLE_RESTRICTION","roles":["ADMIN"]},{"type":"REQUIRED_FIELD","field":"assigneeId"}]`}},
			want:   &workflow.GuardError{Field: "assigneeId"}},

		{name: "one transition fails, another passes", from: "todo", to: "prog", role: "MEMBER",
			rules: []rule{{"todo", "prog", adminsOnly}, {"todo", "prog", `[{"type":"ROLE_RESTRICTION","roles":["MEMBER"]}]`}}},
		{name: "passing transition listed first", from: "todo", to: "prog", role: "MEMBER",
			rules: []rule{{"todo", "prog", ""}, {"todo", "prog", adminsOnly}}},
		{name: "specific fails, from-any passes", from: "todo", to: "prog", role: "MEMBER",
			fields: without(func(f *workflow.IssueFields) { f.AssigneeID = nil }),
			rules:  []rule{{"todo", "prog", requireAssignee}, {"", "prog", ""}}},
		{name: "both fail: a guard error, not TRANSITION_NOT_ALLOWED", from: "todo", to: "prog", role: "VIEWER",
			rules: []rule{{"todo", "prog", adminsOnly}, {"", "prog", `[{"type":"ROLE_RESTRICTION","roles":["MEMBER"]}]`}},
			want:  &workflow.GuardError{Role: "VIEWER"}},
		{name: "a failing guard elsewhere does not matter", from: "todo", to: "prog", role: "VIEWER",
			rules: []rule{{"todo", "prog", ""}, {"prog", "done", adminsOnly}}},
		{name: "unrelated guarded transitions still restrict", from: "todo", to: "done", role: "ADMIN",
			rules: []rule{{"prog", "done", ""}}, want: workflow.ErrTransitionNotAllowed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			names := map[string]uuid.UUID{"todo": b.todo, "prog": b.prog, "done": b.done}
			for _, r := range tc.rules {
				var from *uuid.UUID
				if r.from != "" {
					from = ptr(names[r.from])
				}
				b.transition(t, from, names[r.to], r.guards)
			}
			err := workflow.CheckStatusChange(b.ctx, b.db, &b.workflowID, names[tc.from], names[tc.to], tc.fields, tc.role)
			switch want := tc.want.(type) {
			case nil:
				require.NoError(t, err)
			case *workflow.GuardError:
				var got *workflow.GuardError
				require.ErrorAs(t, err, &got)
				require.Equal(t, want, got)
			default:
				require.ErrorIs(t, err, want)
				var g *workflow.GuardError
				require.False(t, errors.As(err, &g))
			}
		})
	}
}

func TestCheckStatusChangeWithoutWorkflow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.transition(t, &b.todo, b.prog, `[{"type":"ROLE_RESTRICTION","roles":["ADMIN"]}]`)
	require.NoError(t, workflow.CheckStatusChange(b.ctx, b.db, nil, b.done, b.todo, workflow.IssueFields{}, ""))
}

func TestCheckStatusChangeSeesOnlyItsWorkflow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other := newProject(t, b.ctx, b.db)
	other.transition(t, nil, other.done, `[{"type":"ROLE_RESTRICTION","roles":["ADMIN"]}]`)
	require.NoError(t, workflow.CheckStatusChange(b.ctx, b.db, &b.workflowID, b.todo, b.done, full(), "VIEWER"),
		"another workflow's transitions do not make this one restrictive")

	b.transition(t, &b.todo, b.prog, "")
	other.transition(t, nil, b.done, "")
	require.ErrorIs(t, workflow.CheckStatusChange(b.ctx, b.db, &b.workflowID, b.todo, b.done, full(), "ADMIN"),
		workflow.ErrTransitionNotAllowed, "a row of another workflow never allows a change here")
}

func TestGuardErrorText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "workflow: required field dueDate is empty", (&workflow.GuardError{Field: "dueDate"}).Error())
	require.Equal(t, "workflow: role NONE may not make this transition", (&workflow.GuardError{Role: "NONE"}).Error())
}
