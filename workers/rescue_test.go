package workers

import (
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/jobs"
)

// TestRescueAfterComesWithinAMinute: a killed worker's jobs count as stuck 10 s past
// the job timeout (30 s by default), so River's rescuer, looking every 30 s, hands them
// on 40 to 70 s after they started; a kind with a longer timeout of its own (the
// mailbox poll) is left alone by the rescuer until that has passed.
func TestRescueAfterComesWithinAMinute(t *testing.T) {
	t.Parallel()
	got, err := Config{}.rescueAfter()
	require.NoError(t, err)
	require.Equal(t, 40*time.Second, got)
	got, err = Config{JobTimeout: 2 * time.Minute}.rescueAfter()
	require.NoError(t, err)
	require.Equal(t, 2*time.Minute+rescueMargin, got)
	got, err = Config{JobTimeout: 10 * time.Second, RescueAfter: 10 * time.Second}.rescueAfter()
	require.NoError(t, err)
	require.Equal(t, 10*time.Second, got)
	_, err = Config{JobTimeout: 10 * time.Second, RescueAfter: 9 * time.Second}.rescueAfter()
	require.ErrorContains(t, err, "TW_JOB_RESCUE_AFTER")
	require.Equal(t, 5*time.Minute, (&MailPollWorker{}).Timeout(nil), "longer than the rescue horizon: the rescuer waits for it")
	require.Greater(t, (&MailSendWorker{}).Timeout(nil), 30*time.Second, "an SMTP conversation's own limit fits")
}

// TestWebhookRetryAfterRescueIsImmediate: an attempt cut off by a crash (older than the
// worker's timeout when River asks) is sent again at once; an ordinary failure waits
// the configured delay.
func TestWebhookRetryAfterRescueIsImmediate(t *testing.T) {
	t.Parallel()
	w := &WebhookDeliverWorker{delays: []time.Duration{time.Minute, 5 * time.Minute}, timeout: 15 * time.Second}
	at := func(ago time.Duration) *river.Job[jobs.WebhookDeliver] {
		started := time.Now().Add(-ago)
		return &river.Job[jobs.WebhookDeliver]{JobRow: &rivertype.JobRow{Attempt: 1, AttemptedAt: &started}}
	}
	require.WithinDuration(t, time.Now().Add(time.Minute), w.NextRetry(at(2*time.Second)), time.Second)
	require.WithinDuration(t, time.Now(), w.NextRetry(at(45*time.Second)), time.Second)
}
