package api_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/workers"
)

// TestNotificationLivePushAndRetry: a new notification reaches its user's
// /user/queue/notifications (as the API shows it) and nobody else's; a notification job
// run a second time inserts, pushes and mails nothing more.
func TestNotificationLivePushAndRetry(t *testing.T) {
	t.Parallel()
	rec := apitest.NewSMTPRecorder(t)
	f := apitest.NotifyProject(t, func(c *workers.Config) { c.Mail.Addr = rec.Addr })
	h := f.H
	h.MakeAdmin(f.Owner)
	ws, _ := stompServe(t, h)
	cm, cv := stompDial(t, ws, f.Member.Access), stompDial(t, ws, f.Viewer.Access)
	_, err := cm.Subscribe("n", "/user/queue/notifications")
	require.NoError(t, err)
	_, err = cv.Subscribe("n", "/user/queue/notifications")
	require.NoError(t, err)

	_, k1 := apitest.NotifyIssue(t, f, f.Owner, "Pushed", &f.Member)
	frame, pushed := stompMessage(t, cm)
	require.Equal(t, "/user/queue/notifications", frame.Value("destination"))
	listed := apitest.Notifications(t, h, f.Member)
	require.Len(t, listed, 1)
	require.Equal(t, listed[0], pushed, "the push is the notification exactly as the API returns it")
	require.Equal(t, "ISSUE_ASSIGNED", pushed["type"])
	require.Equal(t, k1, pushed["issueKey"])
	apitest.DrainJobs(t, h)
	require.Len(t, rec.Wait(t, 1), 1)

	// Run the completed job again (support staff's retry): same ids, nothing new.
	var jobID int64
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		"SELECT id FROM river_job WHERE kind = 'notify.event' AND args->>'issueKey' = $1", k1).Scan(&jobID))
	r := h.Do("POST", "/api/v1/admin/jobs/"+strconv.FormatInt(jobID, 10)+"/retry", nil, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	ntDrainJob(t, h, jobID, 2)
	require.Len(t, apitest.Notifications(t, h, f.Member), 1, "no second row")
	require.Equal(t, 1, apitest.MailJobs(h, "ISSUE_ASSIGNED"), "no second e-mail job")

	// The viewer's first message is their own: the member's never reached them. The
	// member's next message is the status change: the retry pushed nothing.
	_, k2 := apitest.NotifyIssue(t, f, f.Owner, "Other", &f.Viewer)
	_, m := stompMessage(t, cv)
	require.Equal(t, k2, m["issueKey"])
	require.Equal(t, "ISSUE_ASSIGNED", m["type"])
	apitest.PatchIssueAs(t, f, f.Owner, k1, map[string]any{"statusId": f.Prog})
	_, m = stompMessage(t, cm)
	require.Equal(t, "STATUS_CHANGED", m["type"])
	require.Equal(t, k1, m["issueKey"])

	// Mail: the retried assignment was not sent twice.
	rec.Wait(t, 3)
	apitest.DrainJobs(t, h)
	types := map[string]int{}
	for _, got := range rec.Mails() {
		types[got.To[0]+" "+apitest.ParseMail(t, got).Header.Get("X-Taskweave-Notification-Type")]++
	}
	require.Equal(t, map[string]int{f.Member.Email + " ISSUE_ASSIGNED": 1, f.Member.Email + " STATUS_CHANGED": 1,
		f.Viewer.Email + " ISSUE_ASSIGNED": 1}, types)
}

// ntDrainJob waits until job id has completed its attempt-th run.
func ntDrainJob(t *testing.T, h *apitest.Harness, id int64, attempt int) {
	t.Helper()
	apitest.Eventually(t, 15*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM river_job WHERE id = $1 AND state = 'completed' AND attempt = $2", id, attempt) == 1
	}, "job completed again")
}
