package notify

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/jobs"
)

func TestJobForDropsWhatNotifiesNobody(t *testing.T) {
	t.Parallel()
	actor, other := uuid.New(), uuid.New()
	subj := issue.Subject{ProjectID: uuid.New(), ProjectKey: "ABC", IssueID: uuid.New(), IssueKey: "ABC-7", Title: "Fix it"}
	by := issue.By{ID: &actor, Email: "a@example.com"}
	commentID := uuid.New()

	for _, tc := range []struct {
		name string
		ev   event.Event
		want *jobs.NotifyEvent
	}{
		{"created unassigned", issue.Created{Subject: subj, By: by}, nil},
		{"created assigned to the creator", issue.Created{Subject: subj, By: by, AssigneeID: &actor}, nil},
		{"created assigned to another", issue.Created{Subject: subj, By: by, AssigneeID: &other},
			&jobs.NotifyEvent{Event: jobs.NotifyAssigned, ActorID: &actor, AssigneeID: &other}},
		{"system creation assigned", issue.Created{Subject: subj, AssigneeID: &actor},
			&jobs.NotifyEvent{Event: jobs.NotifyAssigned, AssigneeID: &actor}},
		{"other field", issue.FieldChanged{Subject: subj, By: by, Field: issue.FieldPriority, NewRaw: "HIGH"}, nil},
		{"assignee cleared", issue.FieldChanged{Subject: subj, By: by, Field: issue.FieldAssignee, OldRaw: other.String()}, nil},
		{"self-assigned", issue.FieldChanged{Subject: subj, By: by, Field: issue.FieldAssignee, NewRaw: actor.String()}, nil},
		{"assigned to another", issue.FieldChanged{Subject: subj, By: by, Field: issue.FieldAssignee, NewRaw: other.String()},
			&jobs.NotifyEvent{Event: jobs.NotifyAssigned, ActorID: &actor, AssigneeID: &other}},
		{"status", issue.StatusChanged{Subject: subj, By: by, OldStatusName: "To Do", NewStatusName: "Done"},
			&jobs.NotifyEvent{Event: jobs.NotifyStatusChanged, ActorID: &actor, OldStatus: "To Do", NewStatus: "Done"}},
		{"comment", comment.Created{Subject: subj, By: by, CommentID: commentID, Body: "<p>Hi &amp; <b>bye</b></p>", Mentioned: []uuid.UUID{other}},
			&jobs.NotifyEvent{Event: jobs.NotifyCommented, ActorID: &actor, CommentID: &commentID, Excerpt: "Hi & bye", Mentioned: []uuid.UUID{other}}},
		{"deleted", issue.Deleted{Subject: subj, By: by}, nil},
	} {
		got, ok := jobFor(tc.ev)
		if tc.want == nil {
			require.False(t, ok, tc.name)
			continue
		}
		require.True(t, ok, tc.name)
		want := *tc.want
		want.ProjectID, want.ProjectKey, want.IssueID, want.IssueKey, want.IssueTitle = subj.ProjectID, "ABC", subj.IssueID, "ABC-7", "Fix it"
		require.Equal(t, want, got, tc.name)
	}
}

func TestRecipientsRules(t *testing.T) {
	t.Parallel()
	actor, reporter, assignee, m1, m2 := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	ev := func(kind string) jobs.NotifyEvent { return jobs.NotifyEvent{Event: kind, ActorID: &actor} }

	// Status: reporter and assignee, not the actor, once each.
	require.Equal(t, []want{{reporter, TypeStatusChanged}, {assignee, TypeStatusChanged}},
		recipients(ev(jobs.NotifyStatusChanged), reporter, &assignee))
	require.Equal(t, []want{{reporter, TypeStatusChanged}}, recipients(ev(jobs.NotifyStatusChanged), reporter, &reporter))
	require.Equal(t, []want{{assignee, TypeStatusChanged}}, recipients(ev(jobs.NotifyStatusChanged), actor, &assignee))
	require.Empty(t, recipients(ev(jobs.NotifyStatusChanged), actor, nil))

	// Comments: each mention once; a mentioned reporter gets no COMMENT_ADDED; the author
	// gets nothing even when mentioned, reporter or assignee.
	c := ev(jobs.NotifyCommented)
	c.Mentioned = []uuid.UUID{m1, reporter, m1, actor, m2}
	require.Equal(t, []want{{m1, TypeCommentMention}, {reporter, TypeCommentMention}, {m2, TypeCommentMention},
		{assignee, TypeCommentAdded}}, recipients(c, reporter, &assignee))
	c.Mentioned = nil
	require.Equal(t, []want{{reporter, TypeCommentAdded}}, recipients(c, reporter, &actor))

	// A system comment (no actor) notifies the reporter and assignee.
	sys := jobs.NotifyEvent{Event: jobs.NotifyCommented}
	require.Equal(t, []want{{reporter, TypeCommentAdded}, {assignee, TypeCommentAdded}}, recipients(sys, reporter, &assignee))

	a := ev(jobs.NotifyAssigned)
	a.AssigneeID = &assignee
	require.Equal(t, []want{{assignee, TypeIssueAssigned}}, recipients(a, reporter, &assignee))
	a.AssigneeID = &actor
	require.Empty(t, recipients(a, reporter, &actor))
}

func TestExcerptAndTruncate(t *testing.T) {
	t.Parallel()
	require.Equal(t, "Hello @anna, see <this> now", Excerpt("<p>Hello   @anna,\n\nsee &lt;this&gt;</p><p>now</p>"))
	long := Excerpt(strings.Repeat("ä", 500))
	require.Equal(t, ExcerptRunes, len([]rune(long)))
	require.True(t, len(long) > 0 && []rune(long)[ExcerptRunes-1] == '…')
	require.Equal(t, "short", truncate("short", 10))
}

func TestNotificationIDIsStablePerJobUserAndType(t *testing.T) {
	t.Parallel()
	u := uuid.New()
	require.Equal(t, NotificationID(7, u, TypeIssueAssigned), NotificationID(7, u, TypeIssueAssigned))
	require.NotEqual(t, NotificationID(7, u, TypeIssueAssigned), NotificationID(8, u, TypeIssueAssigned))
	require.NotEqual(t, NotificationID(7, u, TypeIssueAssigned), NotificationID(7, uuid.New(), TypeIssueAssigned))
	require.NotEqual(t, NotificationID(7, u, TypeIssueAssigned), NotificationID(7, u, TypeStatusChanged))
}
