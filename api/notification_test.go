package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestNotificationIssueAssigned(t *testing.T) {
	t.Parallel()
	f := ntFixture(t, nil)
	h := f.h

	_, k1 := ntIssue(t, f, f.owner, "Assign me", &f.member)                // → member
	ntIssue(t, f, f.owner, "Mine", &f.owner)                               // own action: nothing
	_, k3 := ntIssue(t, f, f.owner, "Later", nil)                          // unassigned: nothing
	ntPatch(t, f, f.owner, k3, map[string]any{"assigneeId": f.viewer.ID})  // → viewer
	ntPatch(t, f, f.owner, k3, map[string]any{"clearAssignee": true})      // cleared: nothing
	ntPatch(t, f, f.member, k3, map[string]any{"assigneeId": f.member.ID}) // self-assigned: nothing
	ntPatch(t, f, f.member, k1, map[string]any{"assigneeId": f.owner.ID})  // → owner
	ntDrain(t, h)

	require.Equal(t, []string{"ISSUE_ASSIGNED " + k1}, ntTypes(t, h, f.member))
	require.Equal(t, []string{"ISSUE_ASSIGNED " + k3}, ntTypes(t, h, f.viewer))
	require.Equal(t, []string{"ISSUE_ASSIGNED " + k1}, ntTypes(t, h, f.owner))
	require.Empty(t, ntTypes(t, h, f.outsider))

	n := ntList(t, h, f.member)[0]
	require.Regexp(t, `^[0-9a-f-]{36}$`, n["id"])
	require.Equal(t, k1+" was assigned to you", n["title"])
	require.Equal(t, "Owner assigned "+k1+" “Assign me” to you.", n["body"])
	require.Equal(t, "/p/"+f.key+"/issues/"+k1, n["link"])
	require.Equal(t, false, n["read"])
	require.Equal(t, k1, n["issueKey"])
	require.Equal(t, f.key, n["projectKey"])
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
	f := ntFixture(t, nil)
	h := f.h

	// Reporter owner, assignee member: whoever moves it notifies the other.
	_, k1 := ntIssue(t, f, f.owner, "Move me", &f.member)
	ntPatch(t, f, f.member, k1, map[string]any{"statusId": f.prog})
	ntPatch(t, f, f.owner, k1, map[string]any{"statusId": f.done})
	// Reporter and assignee the same user: one notification.
	_, k2 := ntIssue(t, f, f.owner, "Own", &f.owner)
	ntPatch(t, f, f.member, k2, map[string]any{"statusId": f.prog})
	// An inactive assignee is never notified.
	_, k3 := ntIssue(t, f, f.owner, "Idle", &f.viewer)
	ntDrain(t, h)
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE users SET active = false WHERE id = $1", f.viewer.ID)
	require.NoError(t, err)
	ntPatch(t, f, f.member, k3, map[string]any{"statusId": f.prog})
	ntDrain(t, h)
	_, err = h.DB.Pool.Exec(context.Background(), "UPDATE users SET active = true WHERE id = $1", f.viewer.ID)
	require.NoError(t, err)

	require.Equal(t, []string{"STATUS_CHANGED " + k1, "STATUS_CHANGED " + k2, "STATUS_CHANGED " + k3}, ntTypes(t, h, f.owner),
		"once for k2, reported and assigned alike")
	require.Equal(t, []string{"ISSUE_ASSIGNED " + k1, "STATUS_CHANGED " + k1}, ntTypes(t, h, f.member))
	require.Equal(t, []string{"ISSUE_ASSIGNED " + k3}, ntTypes(t, h, f.viewer), "only the assignment before the deactivation")

	owner := ntFind(t, h, f.owner, "STATUS_CHANGED", k1)
	require.Equal(t, k1+" moved to In Progress", owner["title"])
	require.Equal(t, "Mia moved "+k1+" “Move me” from To Do to In Progress.", owner["body"])
	member := ntFind(t, h, f.member, "STATUS_CHANGED", k1)
	require.Equal(t, k1+" moved to Done", member["title"])
	require.Equal(t, "Owner moved "+k1+" “Move me” from In Progress to Done.", member["body"])

	// A user who left the project hears nothing more about it: the owner moves the
	// issue still assigned to the removed member, the job completes, and nothing is new.
	r := h.Do("DELETE", f.path("/members/"+f.member.ID.String()), nil, f.owner.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	ntPatch(t, f, f.owner, k1, map[string]any{"statusId": f.todo})
	ntDrain(t, h)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND args->>'event' = 'status_changed' AND args->>'newStatus' = 'To Do'"))
	require.Len(t, ntTypes(t, h, f.member), 2)
}

func TestNotificationCommentMentionsAndAdded(t *testing.T) {
	t.Parallel()
	f := ntFixture(t, nil)
	h := f.h
	id, key := ntIssue(t, f, f.owner, "Talk", &f.member) // reporter owner, assignee member

	gone := h.Register("Dora")
	f.addMember(t, gone, "MEMBER")
	r := h.Do("DELETE", "/api/v1/me", nil, gone.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)

	// The viewer mentions the member (twice in the list), the reporter, an outsider and a
	// deleted member: one COMMENT_MENTION each for the member and the reporter (no
	// COMMENT_ADDED on top), nothing for the outsider, who cannot see the project, nor
	// for the deleted user.
	ntComment(t, f, id, key, &f.viewer, "<p>@Mia @Owner &amp; @Otto, look</p>", f.member.ID, f.owner.ID, f.member.ID, f.outsider.ID, gone.ID)
	ntDrain(t, h)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM notifications WHERE user_id = $1", gone.ID))
	require.Equal(t, []string{"COMMENT_MENTION " + key, "ISSUE_ASSIGNED " + key}, ntTypes(t, h, f.member))
	require.Equal(t, []string{"COMMENT_MENTION " + key}, ntTypes(t, h, f.owner))
	mention := ntFind(t, h, f.member, "COMMENT_MENTION", key)
	require.Equal(t, "Viv mentioned you on "+key, mention["title"])
	require.Equal(t, key+" “Talk”: @Mia @Owner & @Otto, look", mention["body"], "the excerpt is plain text")

	// The assignee comments: the reporter gets COMMENT_ADDED, the author nothing, even
	// when mentioning themselves.
	ntComment(t, f, id, key, &f.member, "Done on my side @Mia", f.member.ID)
	ntDrain(t, h)
	require.Equal(t, []string{"COMMENT_ADDED " + key, "COMMENT_MENTION " + key}, ntTypes(t, h, f.owner))
	added := ntFind(t, h, f.owner, "COMMENT_ADDED", key)
	require.Equal(t, "Mia commented on "+key, added["title"])
	require.Equal(t, key+" “Talk”: Done on my side @Mia", added["body"])

	// A system comment notifies the reporter and the assignee.
	ntComment(t, f, id, key, nil, "Postmortem attached")
	ntDrain(t, h)
	require.Equal(t, []string{"COMMENT_ADDED " + key, "COMMENT_ADDED " + key, "COMMENT_MENTION " + key}, ntTypes(t, h, f.owner))
	require.Equal(t, "Taskweave commented on "+key, ntList(t, h, f.owner)[0]["title"])
	require.Equal(t, "Taskweave commented on "+key, ntFind(t, h, f.member, "COMMENT_ADDED", key)["title"])
	require.Equal(t, []string{"COMMENT_ADDED " + key, "COMMENT_MENTION " + key, "ISSUE_ASSIGNED " + key}, ntTypes(t, h, f.member))
	require.Empty(t, ntTypes(t, h, f.viewer))
	require.Empty(t, ntTypes(t, h, f.outsider))
}

func TestNotificationInAppPreferenceOff(t *testing.T) {
	t.Parallel()
	f := ntFixture(t, nil)
	h := f.h
	ntPreference(t, h, f.member, "ISSUE_ASSIGNED", false, true)

	_, key := ntIssue(t, f, f.owner, "Quiet", &f.member)
	// A later notification of a type still on arrives, so the event path works and the
	// assignment was left out on purpose.
	ntPatch(t, f, f.owner, key, map[string]any{"statusId": f.prog})
	ntDrain(t, h)
	require.Equal(t, []string{"STATUS_CHANGED " + key}, ntTypes(t, h, f.member))
	require.Equal(t, 2, h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND state = 'completed'"))
}

func TestNotificationGermanRecipient(t *testing.T) {
	t.Parallel()
	f := ntFixture(t, nil)
	h := f.h
	ntSetLanguage(t, h, f.member, "de")
	ntSetLanguage(t, h, f.viewer, "en")

	_, k1 := ntIssue(t, f, f.owner, "Größe prüfen", &f.member)
	_, k2 := ntIssue(t, f, f.owner, "Check size", &f.viewer)
	ntPatch(t, f, f.owner, k1, map[string]any{"statusId": f.prog})
	ntComment(t, f, mustIssueID(t, f, k1), k1, &f.owner, "Bitte @Mia prüfen", f.member.ID)
	ntDrain(t, h)

	require.Equal(t, []string{"COMMENT_MENTION " + k1, "ISSUE_ASSIGNED " + k1, "STATUS_CHANGED " + k1}, ntTypes(t, h, f.member),
		"types are never translated")
	assigned := ntFind(t, h, f.member, "ISSUE_ASSIGNED", k1)
	require.Equal(t, k1+" wurde Ihnen zugewiesen", assigned["title"])
	require.Equal(t, "Owner hat Ihnen "+k1+" „Größe prüfen“ zugewiesen.", assigned["body"])
	moved := ntFind(t, h, f.member, "STATUS_CHANGED", k1)
	require.Equal(t, k1+" ist jetzt in In Progress", moved["title"], "status names are data, not translated")
	require.Equal(t, "Owner hat "+k1+" „Größe prüfen“ von To Do nach In Progress verschoben.", moved["body"])
	mention := ntFind(t, h, f.member, "COMMENT_MENTION", k1)
	require.Equal(t, "Owner hat Sie in "+k1+" erwähnt", mention["title"])
	require.Equal(t, k1+" „Größe prüfen“: Bitte @Mia prüfen", mention["body"])

	en := ntList(t, h, f.viewer)
	require.Len(t, en, 1)
	require.Equal(t, k2+" was assigned to you", en[0]["title"])
	require.Equal(t, "Owner assigned "+k2+" “Check size” to you.", en[0]["body"])
}

// mustIssueID reads an issue's id by key.
func mustIssueID(t *testing.T, f *issueFixture, key string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, f.h.DB.Pool.QueryRow(context.Background(), "SELECT id FROM issues WHERE key = $1", key).Scan(&id))
	return id
}
