package account_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestNotificationIssueAssigned(t *testing.T) {
	t.Parallel()
	f := apitest.NotifyProject(t, nil)
	h := f.H

	_, k1 := apitest.NotifyIssue(t, f, f.Owner, "Assign me", &f.Member)                 // → member
	apitest.NotifyIssue(t, f, f.Owner, "Mine", &f.Owner)                                // own action: nothing
	_, k3 := apitest.NotifyIssue(t, f, f.Owner, "Later", nil)                           // unassigned: nothing
	apitest.PatchIssueAs(t, f, f.Owner, k3, map[string]any{"assigneeId": f.Viewer.ID})  // → viewer
	apitest.PatchIssueAs(t, f, f.Owner, k3, map[string]any{"clearAssignee": true})      // cleared: nothing
	apitest.PatchIssueAs(t, f, f.Member, k3, map[string]any{"assigneeId": f.Member.ID}) // self-assigned: nothing
	apitest.PatchIssueAs(t, f, f.Member, k1, map[string]any{"assigneeId": f.Owner.ID})  // → owner
	apitest.DrainJobs(t, h)

	require.Equal(t, []string{"ISSUE_ASSIGNED " + k1}, apitest.NotificationTypes(t, h, f.Member))
	require.Equal(t, []string{"ISSUE_ASSIGNED " + k3}, apitest.NotificationTypes(t, h, f.Viewer))
	require.Equal(t, []string{"ISSUE_ASSIGNED " + k1}, apitest.NotificationTypes(t, h, f.Owner))
	require.Empty(t, apitest.NotificationTypes(t, h, f.Outsider))

	n := apitest.Notifications(t, h, f.Member)[0]
	require.Regexp(t, `^[0-9a-f-]{36}$`, n["id"])
	require.Equal(t, k1+" was assigned to you", n["title"])
	require.Equal(t, "Owner assigned "+k1+" “Assign me” to you.", n["body"])
	require.Equal(t, "/p/"+f.Key+"/issues/"+k1, n["link"])
	require.Equal(t, false, n["read"])
	require.Equal(t, k1, n["issueKey"])
	require.Equal(t, f.Key, n["projectKey"])
	created, err := time.Parse(time.RFC3339Nano, n["createdAt"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), created, time.Minute)
	require.Regexp(t, `Z$`, n["createdAt"])
	require.Len(t, n, 9, "exactly Notification's members: %v", n)

	// One job per event that can notify anybody, in the notifications queue; without
	// TW_SMTP_ADDR no e-mail job at all.
	require.Equal(t, 3, h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND queue = 'notifications'"))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.mail'"))
}

func TestNotificationStatusChanged(t *testing.T) {
	t.Parallel()
	f := apitest.NotifyProject(t, nil)
	h := f.H

	// Reporter owner, assignee member: whoever moves it notifies the other.
	_, k1 := apitest.NotifyIssue(t, f, f.Owner, "Move me", &f.Member)
	apitest.PatchIssueAs(t, f, f.Member, k1, map[string]any{"statusId": f.Prog})
	apitest.PatchIssueAs(t, f, f.Owner, k1, map[string]any{"statusId": f.Done})
	// Reporter and assignee the same user: one notification.
	_, k2 := apitest.NotifyIssue(t, f, f.Owner, "Own", &f.Owner)
	apitest.PatchIssueAs(t, f, f.Member, k2, map[string]any{"statusId": f.Prog})
	// An inactive assignee is never notified.
	_, k3 := apitest.NotifyIssue(t, f, f.Owner, "Idle", &f.Viewer)
	apitest.DrainJobs(t, h)
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE users SET active = false WHERE id = $1", f.Viewer.ID)
	require.NoError(t, err)
	apitest.PatchIssueAs(t, f, f.Member, k3, map[string]any{"statusId": f.Prog})
	apitest.DrainJobs(t, h)
	_, err = h.DB.Pool.Exec(context.Background(), "UPDATE users SET active = true WHERE id = $1", f.Viewer.ID)
	require.NoError(t, err)

	require.Equal(t, []string{"STATUS_CHANGED " + k1, "STATUS_CHANGED " + k2, "STATUS_CHANGED " + k3}, apitest.NotificationTypes(t, h, f.Owner),
		"once for k2, reported and assigned alike")
	require.Equal(t, []string{"ISSUE_ASSIGNED " + k1, "STATUS_CHANGED " + k1}, apitest.NotificationTypes(t, h, f.Member))
	require.Equal(t, []string{"ISSUE_ASSIGNED " + k3}, apitest.NotificationTypes(t, h, f.Viewer), "only the assignment before the deactivation")

	owner := apitest.FindNotification(t, h, f.Owner, "STATUS_CHANGED", k1)
	require.Equal(t, k1+" moved to In Progress", owner["title"])
	require.Equal(t, "Mia moved "+k1+" “Move me” from To Do to In Progress.", owner["body"])
	member := apitest.FindNotification(t, h, f.Member, "STATUS_CHANGED", k1)
	require.Equal(t, k1+" moved to Done", member["title"])
	require.Equal(t, "Owner moved "+k1+" “Move me” from In Progress to Done.", member["body"])

	// A user who left the project hears nothing more about it: the owner moves the
	// issue still assigned to the removed member, the job completes, and nothing is new.
	r := h.Do("DELETE", f.Path("/members/"+f.Member.ID.String()), nil, f.Owner.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	apitest.PatchIssueAs(t, f, f.Owner, k1, map[string]any{"statusId": f.Todo})
	apitest.DrainJobs(t, h)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND args->>'event' = 'status_changed' AND args->>'newStatus' = 'To Do'"))
	require.Len(t, apitest.NotificationTypes(t, h, f.Member), 2)
}

func TestNotificationCommentMentionsAndAdded(t *testing.T) {
	t.Parallel()
	f := apitest.NotifyProject(t, nil)
	h := f.H
	id, key := apitest.NotifyIssue(t, f, f.Owner, "Talk", &f.Member) // reporter owner, assignee member

	gone := h.Register("Dora")
	f.AddMember(t, gone, "MEMBER")
	r := h.Do("DELETE", "/api/v1/me", nil, gone.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)

	// The viewer mentions the member (twice in the list), the reporter, an outsider and a
	// deleted member: one COMMENT_MENTION each for the member and the reporter (no
	// COMMENT_ADDED on top), nothing for the outsider, who cannot see the project, nor
	// for the deleted user.
	apitest.CommentAs(t, f, id, key, &f.Viewer, "<p>@Mia @Owner &amp; @Otto, look</p>", f.Member.ID, f.Owner.ID, f.Member.ID, f.Outsider.ID, gone.ID)
	apitest.DrainJobs(t, h)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM notifications WHERE user_id = $1", gone.ID))
	require.Equal(t, []string{"COMMENT_MENTION " + key, "ISSUE_ASSIGNED " + key}, apitest.NotificationTypes(t, h, f.Member))
	require.Equal(t, []string{"COMMENT_MENTION " + key}, apitest.NotificationTypes(t, h, f.Owner))
	mention := apitest.FindNotification(t, h, f.Member, "COMMENT_MENTION", key)
	require.Equal(t, "Viv mentioned you on "+key, mention["title"])
	require.Equal(t, key+" “Talk”: @Mia @Owner & @Otto, look", mention["body"], "the excerpt is plain text")

	// The assignee comments: the reporter gets COMMENT_ADDED, the author nothing, even
	// when mentioning themselves.
	apitest.CommentAs(t, f, id, key, &f.Member, "Done on my side @Mia", f.Member.ID)
	apitest.DrainJobs(t, h)
	require.Equal(t, []string{"COMMENT_ADDED " + key, "COMMENT_MENTION " + key}, apitest.NotificationTypes(t, h, f.Owner))
	added := apitest.FindNotification(t, h, f.Owner, "COMMENT_ADDED", key)
	require.Equal(t, "Mia commented on "+key, added["title"])
	require.Equal(t, key+" “Talk”: Done on my side @Mia", added["body"])

	// A system comment notifies the reporter and the assignee.
	apitest.CommentAs(t, f, id, key, nil, "Postmortem attached")
	apitest.DrainJobs(t, h)
	require.Equal(t, []string{"COMMENT_ADDED " + key, "COMMENT_ADDED " + key, "COMMENT_MENTION " + key}, apitest.NotificationTypes(t, h, f.Owner))
	require.Equal(t, "Taskweave commented on "+key, apitest.Notifications(t, h, f.Owner)[0]["title"])
	require.Equal(t, "Taskweave commented on "+key, apitest.FindNotification(t, h, f.Member, "COMMENT_ADDED", key)["title"])
	require.Equal(t, []string{"COMMENT_ADDED " + key, "COMMENT_MENTION " + key, "ISSUE_ASSIGNED " + key}, apitest.NotificationTypes(t, h, f.Member))
	require.Empty(t, apitest.NotificationTypes(t, h, f.Viewer))
	require.Empty(t, apitest.NotificationTypes(t, h, f.Outsider))
}

func TestNotificationInAppPreferenceOff(t *testing.T) {
	t.Parallel()
	f := apitest.NotifyProject(t, nil)
	h := f.H
	apitest.SetPreference(t, h, f.Member, "ISSUE_ASSIGNED", false, true)

	_, key := apitest.NotifyIssue(t, f, f.Owner, "Quiet", &f.Member)
	// A later notification of a type still on arrives, so the event path works and the
	// assignment was left out on purpose.
	apitest.PatchIssueAs(t, f, f.Owner, key, map[string]any{"statusId": f.Prog})
	apitest.DrainJobs(t, h)
	require.Equal(t, []string{"STATUS_CHANGED " + key}, apitest.NotificationTypes(t, h, f.Member))
	require.Equal(t, 2, h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND state = 'completed'"))
}

func TestNotificationGermanRecipient(t *testing.T) {
	t.Parallel()
	f := apitest.NotifyProject(t, nil)
	h := f.H
	apitest.SetLanguage(t, h, f.Member, "de")
	apitest.SetLanguage(t, h, f.Viewer, "en")

	_, k1 := apitest.NotifyIssue(t, f, f.Owner, "Größe prüfen", &f.Member)
	_, k2 := apitest.NotifyIssue(t, f, f.Owner, "Check size", &f.Viewer)
	apitest.PatchIssueAs(t, f, f.Owner, k1, map[string]any{"statusId": f.Prog})
	apitest.CommentAs(t, f, mustIssueID(t, f, k1), k1, &f.Owner, "Bitte @Mia prüfen", f.Member.ID)
	apitest.DrainJobs(t, h)

	require.Equal(t, []string{"COMMENT_MENTION " + k1, "ISSUE_ASSIGNED " + k1, "STATUS_CHANGED " + k1}, apitest.NotificationTypes(t, h, f.Member),
		"types are never translated")
	assigned := apitest.FindNotification(t, h, f.Member, "ISSUE_ASSIGNED", k1)
	require.Equal(t, k1+" wurde Ihnen zugewiesen", assigned["title"])
	require.Equal(t, "Owner hat Ihnen "+k1+" „Größe prüfen“ zugewiesen.", assigned["body"])
	moved := apitest.FindNotification(t, h, f.Member, "STATUS_CHANGED", k1)
	require.Equal(t, k1+" ist jetzt in In Progress", moved["title"], "status names are data, not translated")
	require.Equal(t, "Owner hat "+k1+" „Größe prüfen“ von To Do nach In Progress verschoben.", moved["body"])
	mention := apitest.FindNotification(t, h, f.Member, "COMMENT_MENTION", k1)
	require.Equal(t, "Owner hat Sie in "+k1+" erwähnt", mention["title"])
	require.Equal(t, k1+" „Größe prüfen“: Bitte @Mia prüfen", mention["body"])

	en := apitest.Notifications(t, h, f.Viewer)
	require.Len(t, en, 1)
	require.Equal(t, k2+" was assigned to you", en[0]["title"])
	require.Equal(t, "Owner assigned "+k2+" “Check size” to you.", en[0]["body"])
}

// mustIssueID reads an issue's id by key.
func mustIssueID(t *testing.T, f *apitest.Project, key string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, f.H.DB.Pool.QueryRow(context.Background(), "SELECT id FROM issues WHERE key = $1", key).Scan(&id))
	return id
}
