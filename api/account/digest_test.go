package account_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/workers"
)

// TestNotificationDigest: a German member on HOURLY gets no single mails; once the hour
// is over, exactly one German digest lists the three notifications, and further runs
// of the same period (five at least) send nothing. The viewer, OFF, gets the single
// mail at once. A period whose only notification was read sends nothing.
func TestNotificationDigest(t *testing.T) {
	t.Parallel()
	rec := apitest.NewSMTPRecorder(t)
	// The digest's clock is real time plus offset (the items are stamped by Postgres).
	// It starts at half past an hour, so a real hour ending during the test cannot end
	// the first period early.
	var offset atomic.Int64
	now := time.Now()
	base := now.Truncate(time.Hour).Add(30 * time.Minute).Sub(now)
	offset.Store(int64(base))
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	f := apitest.NotifyProject(t, func(c *workers.Config) {
		c.Mail.Addr, c.Mail.From, c.BaseURL = rec.Addr, "Taskweave <tw@example.com>", "https://tw.example/"
		c.Digest = workers.DigestConfig{Interval: 100 * time.Millisecond, Now: clock}
	})
	h := f.H
	apitest.SetLanguage(t, h, f.Member, "de")

	// The mode is a top-level member; another value changes nothing.
	get := func(u apitest.User) map[string]any {
		r := h.Do("GET", "/api/v1/me/notification-preferences", nil, u.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return r.JSON(t)
	}
	require.Equal(t, "OFF", get(f.Member)["digest"])
	r := h.Do("PUT", "/api/v1/me/notification-preferences", map[string]any{"digest": "HOURLY"}, f.Member.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "HOURLY", r.JSON(t)["digest"])
	require.Len(t, r.JSON(t)["preferences"], 9)
	apitest.RequireProblem(t, h.Do("PUT", "/api/v1/me/notification-preferences", map[string]any{"digest": "WEEKLY",
		"preferences": []any{map[string]any{"type": "COMMENT_ADDED", "email": false}}}, f.Member.Access),
		400, "BAD_REQUEST", apitest.Reason("INVALID_ENUM"))
	require.Equal(t, "HOURLY", get(f.Member)["digest"])
	for _, p := range get(f.Member)["preferences"].([]any) {
		require.Equal(t, true, p.(map[string]any)["email"], "the refused PUT changed nothing")
	}

	// Three notifications for the member: assigned, moved, commented.
	issueID, key := apitest.NotifyIssue(t, f, f.Owner, "Größe prüfen", &f.Member)
	apitest.PatchIssueAs(t, f, f.Owner, key, map[string]any{"statusId": f.Prog})
	apitest.CommentAs(t, f, issueID, key, &f.Owner, "Bitte bis Freitag.")
	// The viewer (OFF) gets their assignment at once.
	_, vkey := apitest.NotifyIssue(t, f, f.Owner, "Check size", &f.Viewer)
	got := rec.Wait(t, 1)
	apitest.DrainJobs(t, h)
	require.Equal(t, []string{f.Viewer.Email}, got[0].To)
	require.Equal(t, vkey+" was assigned to you", apitest.ParseMail(t, got[0]).Subject)
	require.Len(t, apitest.Notifications(t, h, f.Member), 3)
	require.Zero(t, h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.mail' AND args->>'userId' = $1", f.Member.ID.String()))
	require.Equal(t, 3, h.Count("SELECT count(*) FROM notification_digest_items WHERE user_id = $1", f.Member.ID))

	runs := func() int {
		return h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.digest' AND state = 'completed'")
	}
	waitRuns := func(n int) {
		t.Helper()
		start := runs()
		apitest.Eventually(t, 20*time.Second, func() bool { return runs() >= start+n }, "digest runs")
	}
	// The hour is not over: runs send nothing.
	waitRuns(3)
	require.Len(t, rec.Mails(), 1)

	// Two hours on (the items' hour is over whenever they were made): one digest, in
	// German, with all three.
	offset.Store(int64(base + 2*time.Hour))
	got = rec.Wait(t, 2)
	require.Equal(t, []string{f.Member.Email}, got[1].To)
	m := apitest.ParseMail(t, got[1])
	require.Equal(t, "Ihre Taskweave-Zusammenfassung: 3 ungelesene Benachrichtigungen", m.Subject)
	require.Equal(t, "DIGEST", m.Header.Get("X-Taskweave-Notification-Type"))
	text := strings.ReplaceAll(m.Text, "\r\n", "\n")
	require.Contains(t, text, "Hallo Mia,\n\nIhre 3 ungelesenen Benachrichtigungen von ")
	require.Contains(t, text, "* "+key+" wurde Ihnen zugewiesen\n  Owner hat Ihnen "+key+" „Größe prüfen“ zugewiesen.\n  https://tw.example/p/"+f.Key+"/issues/"+key+"\n")
	require.Contains(t, text, "* "+key+" ist jetzt in ")
	require.Contains(t, text, "* Owner hat "+key+" kommentiert\n  "+key+" „Größe prüfen“: Bitte bis Freitag.")
	require.Contains(t, text, "In Taskweave öffnen: https://tw.example/notifications\n")
	require.Contains(t, text, "E-Mail-Zusammenfassungen")
	require.Less(t, strings.Index(text, "zugewiesen\n"), strings.Index(text, "kommentiert\n"), "oldest first")

	// More runs of the same period send nothing more.
	waitRuns(5)
	apitest.DrainJobs(t, h)
	require.Len(t, rec.Mails(), 2)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM notification_digests WHERE user_id = $1 AND items = 3", f.Member.ID))
	require.Zero(t, h.Count("SELECT count(*) FROM notification_digest_items WHERE user_id = $1", f.Member.ID))

	// The next hour's only notification is read in the app before the hour ends: that
	// period sends nothing.
	_, k2 := apitest.NotifyIssue(t, f, f.Owner, "Zweites", &f.Member)
	apitest.DrainJobs(t, h)
	n := apitest.FindNotification(t, h, f.Member, "ISSUE_ASSIGNED", k2)
	rr := h.Do("PATCH", "/api/v1/notifications/"+n["id"].(string)+"/read", nil, f.Member.Access)
	require.Equal(t, http.StatusOK, rr.Status, "%s", rr.Body)
	offset.Store(int64(base + 4*time.Hour))
	apitest.Eventually(t, 20*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM notification_digest_items WHERE user_id = $1", f.Member.ID) == 0
	}, "the read item was taken")
	waitRuns(3)
	apitest.DrainJobs(t, h)
	require.Len(t, rec.Mails(), 2, "an empty period sends nothing")
}
