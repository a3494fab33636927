package workers_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store/storetest"
	"github.com/taskweave/taskweave/workers"
)

type refusedArgs struct{}

func (refusedArgs) Kind() string { return "unavailable_test.refused" }

// TestUnavailableDatabaseDoesNotSpendAttempts: a run that fails because the database
// refused a connection (53300) is snoozed, not failed: the job's attempt count and
// errors stay as they were, so its attempts are spent only on real failures. A job of
// one attempt survives three refusals and then completes; an ordinary error still
// fails it.
func TestUnavailableDatabaseDoesNotSpendAttempts(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	var runs atomic.Int32
	ws := river.NewWorkers()
	river.AddWorker(ws, river.WorkFunc(func(context.Context, *river.Job[refusedArgs]) error {
		switch runs.Add(1) {
		case 1, 2, 3:
			return fmt.Errorf("record delivery: %w", &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"})
		default:
			return nil
		}
	}))
	// A receiver refusing connections is a real failure, though it is a network error.
	river.AddWorker(ws, river.WorkFunc(func(context.Context, *river.Job[failArgs]) error {
		_, err := net.Dial("tcp", "127.0.0.1:1")
		return fmt.Errorf("webhook post: %w", err)
	}))
	client, err := river.NewClient(riverpgxv5.New(db.Pool), &river.Config{
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers:           ws,
		Middleware:        []rivertype.Middleware{workers.NewUnavailable(nil)},
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		TestOnly:          true,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { _ = client.Stop(context.Background()) })

	inserted := time.Now()
	refused, err := client.Insert(ctx, refusedArgs{}, &river.InsertOpts{MaxAttempts: 1})
	require.NoError(t, err)
	failed, err := client.Insert(ctx, failArgs{}, &river.InsertOpts{MaxAttempts: 1})
	require.NoError(t, err)

	// The first refusal: snoozed (due in 5 s; River keeps a short snooze `available`
	// with a later scheduled_at), no attempt spent, no error recorded.
	var row *rivertype.JobRow
	require.Eventually(t, func() bool {
		row, err = client.JobGet(ctx, refused.Job.ID)
		return err == nil && row.State != rivertype.JobStateRunning && runs.Load() == 1
	}, 10*time.Second, 5*time.Millisecond)
	require.Contains(t, []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateScheduled}, row.State)
	require.Zero(t, row.Attempt, "a refused run is not an attempt")
	require.Empty(t, row.Errors)
	// Snoozed for 5 s from its run, which came between the insert and now (a loaded
	// machine may take seconds to look).
	require.True(t, !row.ScheduledAt.Before(inserted.Add(4*time.Second)) && !row.ScheduledAt.After(time.Now().Add(6*time.Second)),
		"snoozed for 5 s: due %s, inserted %s", row.ScheduledAt, inserted)

	// Made due at once (a test's shortcut past the snooze), twice more refused, then it runs to completion on its one attempt.
	for runs.Load() < 4 {
		_, err = db.Pool.Exec(ctx, "UPDATE river_job SET scheduled_at = now() WHERE id = $1 AND state IN ('scheduled', 'available')", refused.Job.ID)
		require.NoError(t, err)
		time.Sleep(50 * time.Millisecond)
	}
	require.Eventually(t, func() bool {
		row, err = client.JobGet(ctx, refused.Job.ID)
		return err == nil && row.State == rivertype.JobStateCompleted
	}, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, row.Attempt)

	require.Eventually(t, func() bool {
		row, err = client.JobGet(ctx, failed.Job.ID)
		return err == nil && row.State == rivertype.JobStateDiscarded
	}, 10*time.Second, 10*time.Millisecond, "a failure against a receiver (a refused connection) still spends its attempt")
	require.Equal(t, 1, row.Attempt)
	require.Len(t, row.Errors, 1)
}
