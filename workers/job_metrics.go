package workers

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/taskweave/taskweave/domain/metric"
)

// Outcomes of one run, the outcome label of taskweave_river_job_run_duration_seconds.
const (
	OutcomeCompleted = "completed"
	// OutcomeFailed is an error, a panic or a river.JobCancel; the failure counter's
	// state label says what River does with the job next.
	OutcomeFailed = "failed"
	// OutcomeSnoozed is a river.JobSnooze: River reschedules the job without counting
	// the attempt or recording an error, so it is no failure.
	OutcomeSnoozed = "snoozed"
	// OutcomeInterrupted is a run cut off by the client's own stop: River makes the job
	// available again without recording an error (River ≥ 0.44), so it is no failure.
	OutcomeInterrupted = "interrupted"
)

// States a failed attempt leaves its job in, the state label of
// taskweave_river_job_failures_total.
const (
	// FailureRetryable: River retries the job. River may set it straight to available
	// when the retry is due within its scheduler interval; it is counted here all the
	// same, since it is waiting for a retry.
	FailureRetryable = "retryable"
	// FailureDiscarded: the attempt was the last one (attempt ≥ max attempts).
	FailureDiscarded = "discarded"
	// FailureCancelled: the worker returned river.JobCancel, or the job was cancelled
	// while it ran (the ops page's cancel); River never retries it.
	FailureCancelled = "cancelled"
)

var failureStates = []string{FailureRetryable, FailureDiscarded, FailureCancelled}

// JobMetrics is the worker middleware behind the job metrics the dashboards read. It
// sees every job the client works as it runs, so none is lost: the client's event
// subscription it replaced drops events once its buffer is full. Register it first in
// river.Config.Middleware so its timing includes every other middleware.
type JobMetrics struct {
	river.MiddlewareDefaults

	duration *prometheus.HistogramVec
	failures *prometheus.CounterVec
	wait     *prometheus.HistogramVec
	// seen holds the (queue, kind) pairs whose failure series exist: they are created at
	// zero with the pair's first run, so a failure panel shows 0 rather than no data.
	seen sync.Map
}

type queueKind struct{ queue, kind string }

// NewJobMetrics builds the middleware and registers its metrics on reg (nil:
// unregistered); a second client on the same registry shares the first one's series.
func NewJobMetrics(reg *prometheus.Registry) *JobMetrics {
	m := &JobMetrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "taskweave_river_job_run_duration_seconds",
			Help:    "Time jobs spent running, by queue, kind and outcome: completed, failed, snoozed or interrupted (cut off by shutdown).",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"queue", "kind", "outcome"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_river_job_failures_total",
			Help: "Failed job attempts by queue, kind and the state River moves the job to: retryable, discarded or cancelled.",
		}, []string{"queue", "kind", "state"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "taskweave_river_job_queue_wait_seconds",
			Help:    "Time jobs waited between becoming available (scheduled_at) and starting (attempted_at).",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"queue", "kind"}),
	}
	if reg != nil {
		m.duration = metric.Register(reg, m.duration)
		m.failures = metric.Register(reg, m.failures)
		m.wait = metric.Register(reg, m.wait)
	}
	return m
}

// Work implements rivertype.WorkerMiddleware.
func (m *JobMetrics) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	m.zeroFailures(job)
	started := time.Now()
	attempted := started
	if job.AttemptedAt != nil {
		attempted = *job.AttemptedAt
	}
	m.wait.WithLabelValues(job.Queue, job.Kind).Observe(max(attempted.Sub(job.ScheduledAt), 0).Seconds())

	returned := false
	defer func() {
		// A panic is on its way to River, which recovers it and records a failed
		// attempt; it is not recovered here, so River's trace stays the panic's own.
		if !returned {
			m.observe(job, started, OutcomeFailed, retryOrDiscard(job))
		}
	}()
	err := doInner(ctx)
	returned = true
	outcome, state := classify(ctx, job, err)
	m.observe(job, started, outcome, state)
	return err
}

func (m *JobMetrics) observe(job *rivertype.JobRow, started time.Time, outcome, failureState string) {
	m.duration.WithLabelValues(job.Queue, job.Kind, outcome).Observe(time.Since(started).Seconds())
	if failureState != "" {
		m.failures.WithLabelValues(job.Queue, job.Kind, failureState).Inc()
	}
}

func (m *JobMetrics) zeroFailures(job *rivertype.JobRow) {
	key := queueKind{job.Queue, job.Kind}
	if _, ok := m.seen.Load(key); ok {
		return
	}
	for _, s := range failureStates {
		m.failures.WithLabelValues(job.Queue, job.Kind, s)
	}
	m.seen.Store(key, struct{}{})
}

// classify maps a run's result to its outcome and, for a failure, the job's next state,
// in the order River's executor decides (internal/jobexecutor reportResult/reportError
// in v0.51): a cancel from outside wins, then a snooze, a JobCancel, the client's stop,
// and last the attempt count.
func classify(ctx context.Context, job *rivertype.JobRow, err error) (outcome, failureState string) {
	if err == nil {
		return OutcomeCompleted, ""
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, rivertype.ErrJobCancelledRemotely) {
		return OutcomeFailed, FailureCancelled
	}
	var snooze *rivertype.JobSnoozeError
	if errors.As(err, &snooze) {
		return OutcomeSnoozed, ""
	}
	var cancel *rivertype.JobCancelError
	if errors.As(err, &cancel) {
		return OutcomeFailed, FailureCancelled
	}
	if stoppedByClient(cause, err) {
		return OutcomeInterrupted, ""
	}
	return OutcomeFailed, retryOrDiscard(job)
}

// riverStopMessage is the message of River's internal ErrStop (rivercommon), the
// cause its client cancels running jobs with when it stops. The error itself is not
// exported; TestJobMetricsCountsAStoppedJobAsInterrupted fails if River renames it.
const riverStopMessage = "stop initiated"

// stoppedByClient mirrors River's isSoftStopCancelError: the job's context was
// cancelled by the client's stop and the worker returned that cancellation. A context
// cancelled for any other reason (the context given to Start, when no SoftStopTimeout
// is set) is an ordinary error to River, and a failure here.
func stoppedByClient(cause, err error) bool {
	if cause == nil || cause.Error() != riverStopMessage {
		return false
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, cause)
}

func retryOrDiscard(job *rivertype.JobRow) string {
	if job.Attempt >= job.MaxAttempts {
		return FailureDiscarded
	}
	return FailureRetryable
}
