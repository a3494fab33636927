package notify_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/notify"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestPeriodEnd(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v
	}
	for _, tc := range []struct{ mode, now, want string }{
		{notify.DigestHourly, "2026-11-28T13:59:59Z", "2026-11-28T13:00:00Z"},
		{notify.DigestHourly, "2026-11-28T14:00:00Z", "2026-11-28T14:00:00Z"},
		{notify.DigestHourly, "2026-11-28T15:30:00+02:00", "2026-11-28T13:00:00Z"},
		{notify.DigestDaily, "2026-11-28T07:59:59Z", "2026-11-27T08:00:00Z"},
		{notify.DigestDaily, "2026-11-28T08:00:00Z", "2026-11-28T08:00:00Z"},
		{notify.DigestDaily, "2026-11-28T23:10:00Z", "2026-11-28T08:00:00Z"},
		{notify.DigestDaily, "2026-03-01T01:00:00Z", "2026-02-28T08:00:00Z"},
		{notify.DigestOff, "2026-11-28T13:14:15.9Z", "2026-11-28T13:14:15Z"},
	} {
		require.Equal(t, at(tc.want), notify.PeriodEnd(tc.mode, at(tc.now)), "%s at %s", tc.mode, tc.now)
	}
}

// TestDigestOncePerPeriodAcrossRunners: four digesters running the same DAILY period
// at once queue one e-mail with the day's items; an item of the next day waits for the
// next period.
func TestDigestOncePerPeriodAcrossRunners(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	user := uuid.New()
	_, err := db.Pool.Exec(ctx, "INSERT INTO users (id, email, display_name) VALUES ($1, $2, 'Dee')", user, user.String()+"@example.com")
	require.NoError(t, err)
	require.NoError(t, notify.SetDigest(ctx, db.Bun, user, notify.DigestDaily))
	day := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	for i, created := range []time.Time{day.Add(-20 * time.Hour), day.Add(-time.Hour), day.Add(-time.Second), day.Add(time.Minute)} {
		_, err := db.Pool.Exec(ctx, `INSERT INTO notification_digest_items (notification_id, user_id, type, title, body, link, created_at)
			VALUES ($1, $2, 'ISSUE_ASSIGNED', $3, 'body', '/p/ABC/issues/ABC-1', $4)`, uuid.New(), user, "item "+string(rune('A'+i)), created)
		require.NoError(t, err)
	}
	var mu sync.Mutex
	var queued []jobs.MailSend
	enqueue := func(_ context.Context, _ bun.Tx, ps ...river.InsertManyParams) error {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range ps {
			queued = append(queued, p.Args.(jobs.MailSend))
		}
		return nil
	}
	clock := func() time.Time { return day.Add(3 * time.Minute) }
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := &notify.Digester{DB: db.Bun, Enqueue: enqueue, BaseURL: "https://tw.example", Now: clock}
			_, err := d.Run(ctx)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, queued, 1)
	m := queued[0]
	require.Equal(t, notify.DigestID(user, day), m.ID)
	require.Equal(t, notify.TypeDigest, m.Type)
	require.Equal(t, "Your Taskweave digest: 3 unread notifications", m.Subject)
	require.Contains(t, m.Body, "Your 3 unread notifications from 2026-11-27 08:00 to 2026-11-28 08:00 (UTC):")
	require.Contains(t, m.Body, "* item A\n  body\n  https://tw.example/p/ABC/issues/ABC-1")
	require.NotContains(t, m.Body, "item D")
	var left int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM notification_digest_items WHERE user_id = $1", user).Scan(&left))
	require.Equal(t, 1, left, "the next day's item waits")
}
