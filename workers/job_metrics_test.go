package workers_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
	"github.com/taskweave/taskweave/workers"
)

// The job kinds of these tests, worked by a client that has only them.
type (
	noopArgs    struct{ N int }
	failArgs    struct{}
	panicArgs   struct{}
	cancelArgs  struct{}
	snoozeArgs  struct{}
	blockArgs   struct{}
	alwaysRetry struct{}
)

func (noopArgs) Kind() string   { return "metrics_test.noop" }
func (failArgs) Kind() string   { return "metrics_test.fail" }
func (panicArgs) Kind() string  { return "metrics_test.panic" }
func (cancelArgs) Kind() string { return "metrics_test.cancel" }
func (snoozeArgs) Kind() string { return "metrics_test.snooze" }
func (blockArgs) Kind() string  { return "metrics_test.block" }

// NextRetry makes a failed attempt available again at once, so a retry needs no wait.
func (alwaysRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }

// metricsClient is a working client on db with the job metrics middleware on reg, the
// way workers.NewClient installs it, and the test kinds registered.
func metricsClient(t *testing.T, db *store.DB, reg *prometheus.Registry, blocked chan<- int64) *river.Client[pgx.Tx] {
	t.Helper()
	ws := river.NewWorkers()
	river.AddWorker(ws, river.WorkFunc(func(context.Context, *river.Job[noopArgs]) error { return nil }))
	river.AddWorker(ws, river.WorkFunc(func(context.Context, *river.Job[failArgs]) error { return errors.New("boom") }))
	river.AddWorker(ws, river.WorkFunc(func(context.Context, *river.Job[panicArgs]) error { panic("kaboom") }))
	river.AddWorker(ws, river.WorkFunc(func(context.Context, *river.Job[cancelArgs]) error {
		return river.JobCancel(errors.New("not worth retrying"))
	}))
	river.AddWorker(ws, river.WorkFunc(func(_ context.Context, job *river.Job[snoozeArgs]) error {
		var meta struct{ Snoozes int }
		if err := json.Unmarshal(job.Metadata, &meta); err != nil {
			return err
		}
		if meta.Snoozes == 0 {
			return river.JobSnooze(0)
		}
		return nil
	}))
	river.AddWorker(ws, river.WorkFunc(func(ctx context.Context, job *river.Job[blockArgs]) error {
		blocked <- job.ID
		<-ctx.Done()
		return ctx.Err()
	}))
	client, err := river.NewClient(riverpgxv5.New(db.Pool), &river.Config{
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 200}},
		Workers:           ws,
		Middleware:        []rivertype.Middleware{workers.NewJobMetrics(reg)},
		RetryPolicy:       alwaysRetry{},
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		TestOnly:          true,
	})
	require.NoError(t, err)
	return client
}

// series sums the samples (a histogram's count, a counter's value) of the series of
// name whose labels include want, and reports how many series matched.
func series(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) (sum float64, n int) {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue next
				}
			}
			n++
			if h := m.GetHistogram(); h != nil {
				sum += float64(h.GetSampleCount())
			} else {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum, n
}

func runs(t *testing.T, reg *prometheus.Registry, kind, outcome string) float64 {
	t.Helper()
	v, _ := series(t, reg, "taskweave_river_job_run_duration_seconds", map[string]string{"kind": kind, "outcome": outcome})
	return v
}

func failures(t *testing.T, reg *prometheus.Registry, kind, state string) float64 {
	t.Helper()
	v, n := series(t, reg, "taskweave_river_job_failures_total", map[string]string{"queue": river.QueueDefault, "kind": kind, "state": state})
	require.Equal(t, 1, n, "the %s/%s failure series exists from the kind's first run", kind, state)
	return v
}

func countJobs(t *testing.T, db *store.DB, where string) int {
	t.Helper()
	var n int
	require.NoError(t, db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM river_job WHERE "+where).Scan(&n))
	return n
}

func waitFor(t *testing.T, within time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestJobMetricsCountsEveryJobOfABurst: 10,000 jobs inserted at once are each counted
// once, which the event subscription the middleware replaced could not promise (its
// buffer drops events under load); failures carry the state River gives the job.
func TestJobMetricsCountsEveryJobOfABurst(t *testing.T) {
	t.Parallel()
	const burst = 10_000
	ctx := context.Background()
	db := storetest.NewDB(t)
	reg := prometheus.NewRegistry()
	client := metricsClient(t, db, reg, nil)

	params := make([]river.InsertManyParams, 0, burst+60)
	for i := range burst {
		params = append(params, river.InsertManyParams{Args: noopArgs{N: i}})
	}
	for range 20 { // two attempts each: retryable, then discarded
		params = append(params, river.InsertManyParams{Args: failArgs{}, InsertOpts: &river.InsertOpts{MaxAttempts: 2}})
	}
	for range 10 { // one attempt: discarded
		params = append(params, river.InsertManyParams{Args: panicArgs{}, InsertOpts: &river.InsertOpts{MaxAttempts: 1}})
	}
	for range 10 {
		params = append(params, river.InsertManyParams{Args: cancelArgs{}})
		params = append(params, river.InsertManyParams{Args: snoozeArgs{}})
	}
	_, err := client.InsertMany(ctx, params)
	require.NoError(t, err)

	start := time.Now()
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(sctx)
	})
	waitFor(t, 45*time.Second, func() bool {
		return countJobs(t, db, "state NOT IN ('completed', 'discarded', 'cancelled')") == 0
	}, "every job finalized")
	t.Logf("%d jobs worked in %s", len(params), time.Since(start).Round(time.Millisecond))
	require.Equal(t, burst+10, countJobs(t, db, "state = 'completed'"))
	require.Equal(t, 30, countJobs(t, db, "state = 'discarded'"))
	require.Equal(t, 10, countJobs(t, db, "state = 'cancelled'"))

	require.Equal(t, float64(burst), runs(t, reg, "metrics_test.noop", workers.OutcomeCompleted), "every job of the burst counted")
	require.Zero(t, runs(t, reg, "metrics_test.noop", workers.OutcomeFailed))
	for _, state := range []string{workers.FailureRetryable, workers.FailureDiscarded, workers.FailureCancelled} {
		require.Zero(t, failures(t, reg, "metrics_test.noop", state))
	}

	require.Equal(t, float64(40), runs(t, reg, "metrics_test.fail", workers.OutcomeFailed))
	require.Equal(t, float64(20), failures(t, reg, "metrics_test.fail", workers.FailureRetryable))
	require.Equal(t, float64(20), failures(t, reg, "metrics_test.fail", workers.FailureDiscarded))
	require.Zero(t, failures(t, reg, "metrics_test.fail", workers.FailureCancelled))

	require.Equal(t, float64(10), runs(t, reg, "metrics_test.panic", workers.OutcomeFailed), "a panic is counted on its way to River")
	require.Equal(t, float64(10), failures(t, reg, "metrics_test.panic", workers.FailureDiscarded))
	require.Zero(t, failures(t, reg, "metrics_test.panic", workers.FailureRetryable))

	require.Equal(t, float64(10), runs(t, reg, "metrics_test.cancel", workers.OutcomeFailed))
	require.Equal(t, float64(10), failures(t, reg, "metrics_test.cancel", workers.FailureCancelled))
	require.Zero(t, failures(t, reg, "metrics_test.cancel", workers.FailureRetryable))

	require.Equal(t, float64(10), runs(t, reg, "metrics_test.snooze", workers.OutcomeSnoozed), "a snooze is no failure")
	require.Equal(t, float64(10), runs(t, reg, "metrics_test.snooze", workers.OutcomeCompleted))
	require.Zero(t, failures(t, reg, "metrics_test.snooze", workers.FailureRetryable))

	// Every run waited in the queue once: the burst, 40 failed attempts, 10 panics, 10
	// cancels and 20 runs of the snoozed jobs.
	waits, n := series(t, reg, "taskweave_river_job_queue_wait_seconds", map[string]string{"queue": river.QueueDefault})
	require.Equal(t, 5, n, "one wait series per kind")
	require.Equal(t, float64(burst+40+10+10+20), waits)
}

// TestJobMetricsCountsAStoppedJobAsInterrupted: a job cut off by the client's stop is
// made available again without an error (River ≥ 0.44), so it is an interrupted run,
// not a failure; a job cancelled while it runs (the ops page's cancel) is a failure
// in state cancelled.
func TestJobMetricsCountsAStoppedJobAsInterrupted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	reg := prometheus.NewRegistry()
	blocked := make(chan int64, 2)
	client := metricsClient(t, db, reg, blocked)
	res, err := client.InsertMany(ctx, []river.InsertManyParams{{Args: blockArgs{}}, {Args: blockArgs{}}})
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	running := map[int64]bool{}
	for range 2 {
		select {
		case id := <-blocked:
			running[id] = true
		case <-time.After(20 * time.Second):
			t.Fatal("the blocking jobs did not start")
		}
	}
	cancelled, stopped := res[0].Job.ID, res[1].Job.ID
	require.True(t, running[cancelled] && running[stopped])

	_, err = client.JobCancel(ctx, cancelled)
	require.NoError(t, err)
	waitFor(t, 20*time.Second, func() bool {
		return countJobs(t, db, "state = 'cancelled'") == 1
	}, "the running job cancelled")
	require.Equal(t, float64(1), runs(t, reg, "metrics_test.block", workers.OutcomeFailed))
	require.Equal(t, float64(1), failures(t, reg, "metrics_test.block", workers.FailureCancelled))

	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, client.StopAndCancel(sctx))
	var state string
	var errCount int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT state::text, coalesce(array_length(errors, 1), 0) FROM river_job WHERE id = $1",
		stopped).Scan(&state, &errCount))
	require.Equal(t, "available", state, "River makes a job cut off by its stop available again")
	require.Zero(t, errCount, "and records no error")

	require.Equal(t, float64(1), runs(t, reg, "metrics_test.block", workers.OutcomeInterrupted))
	require.Equal(t, float64(1), runs(t, reg, "metrics_test.block", workers.OutcomeFailed), "the stop is no failure")
	require.Zero(t, failures(t, reg, "metrics_test.block", workers.FailureRetryable))
	require.Zero(t, failures(t, reg, "metrics_test.block", workers.FailureDiscarded))
}

// TestJobMetricsShareARegistry: a second client on one registry (the API's `all`
// process, tests) reuses the first one's series instead of panicking.
func TestJobMetricsShareARegistry(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	a, b := workers.NewJobMetrics(reg), workers.NewJobMetrics(reg)
	job := &rivertype.JobRow{Queue: "q", Kind: "k", Attempt: 1, MaxAttempts: 1, ScheduledAt: time.Now()}
	require.NoError(t, a.Work(context.Background(), job, func(context.Context) error { return nil }))
	require.Error(t, b.Work(context.Background(), job, func(context.Context) error { return errors.New("x") }))
	v, _ := series(t, reg, "taskweave_river_job_run_duration_seconds", map[string]string{"kind": "k"})
	require.Equal(t, float64(2), v)
	v, _ = series(t, reg, "taskweave_river_job_failures_total", map[string]string{"kind": "k", "state": workers.FailureDiscarded})
	require.Equal(t, float64(1), v)
}
