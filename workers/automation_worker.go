package workers

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/metric"
	"github.com/taskweave/taskweave/jobs"
)

// addAutomationWorkers registers the rule evaluation worker and the execution log's
// retention, and returns the periodic cleanup job.
func addAutomationWorkers(ws *river.Workers, cfg Config, d Deps) []*river.PeriodicJob {
	w := NewAutomationEvaluateWorker(d)
	w.Engine.Limits = automation.Limits{ChainBudget: cfg.AutomationChainBudget, ProjectRate: cfg.AutomationProjectRate}
	w.Engine.WebhookAttempts = cfg.Webhook.WithDefaults().MaxAttempts()
	river.AddWorker(ws, w)
	river.AddWorker(ws, NewAutomationWebhookWorker(cfg.Webhook, d))
	run := &AutomationRunWorker{Engine: w.Engine, metrics: w.metrics}
	river.AddWorker(ws, run)
	river.AddWorker(ws, river.WorkFunc(func(ctx context.Context, job *river.Job[jobs.AutomationScheduleScan]) error {
		_, err := automation.ScanSchedules(ctx, d.DB.Bun, d.Bus, time.Now())
		return err
	}))
	scan := cfg.AutomationScheduleScan
	if scan <= 0 {
		scan = DefaultScheduleScan
	}
	// Executions past their retention.
	river.AddWorker(ws, river.WorkFunc(func(ctx context.Context, job *river.Job[jobs.AutomationCleanup]) error {
		_, err := automation.Cleanup(ctx, d.DB.Bun, job.Args.Retention, automation.CleanupBatch)
		return err
	}))
	retention := cfg.AutomationRetention
	if retention <= 0 {
		retention = automation.DefaultRetention
	}
	return []*river.PeriodicJob{periodic("automation_cleanup", time.Hour, true, jobs.AutomationCleanup{Retention: retention}),
		periodic("automation_schedule_scan", scan, true, jobs.AutomationScheduleScan{})}
}

// DefaultScheduleScan is how often due scheduled rules are looked for: a run starts
// within this much of its slot.
const DefaultScheduleScan = time.Minute

// runTimeout bounds one attempt of a scheduled run (up to automation.MaxRunIssues
// evaluations); a retry goes on with the issues not yet done.
const runTimeout = 10 * time.Minute

// AutomationRunWorker runs one slot of a scheduled rule (automation.Engine.RunScheduled).
type AutomationRunWorker struct {
	river.WorkerDefaults[jobs.AutomationRun]
	Engine  *automation.Engine
	metrics *automationMetrics
}

// Work implements river.Worker.
func (w *AutomationRunWorker) Work(ctx context.Context, job *river.Job[jobs.AutomationRun]) error {
	o, err := w.Engine.RunScheduled(ctx, job.Args.RunID)
	w.metrics.observe(automation.TriggerScheduled, o.Outcomes, err)
	switch {
	case err != nil:
		w.metrics.runs.WithLabelValues("error").Inc()
	case o.Status == automation.RunDone && o.Truncated:
		w.metrics.runs.WithLabelValues("truncated").Inc()
	case o.Status == automation.RunDone:
		w.metrics.runs.WithLabelValues("done").Inc()
	case o.Status == automation.RunSkipped:
		w.metrics.runs.WithLabelValues("skipped").Inc()
	}
	return err
}

// Timeout gives a run of many issues its time.
func (w *AutomationRunWorker) Timeout(*river.Job[jobs.AutomationRun]) time.Duration {
	return runTimeout
}

// AutomationEvaluateWorker evaluates the rules of one triggering event and runs the
// actions of those that fire (automation.Engine). Each rule commits its actions with
// its execution row, unique per (event, rule): a retried or rescued job applies no rule
// twice, and an infrastructure error is returned so River retries with its backoff.
type AutomationEvaluateWorker struct {
	river.WorkerDefaults[jobs.AutomationEvaluate]
	Engine  *automation.Engine
	metrics *automationMetrics
}

// NewAutomationEvaluateWorker builds the worker on the process's database and event
// bus (so actions reach every consumer a request's changes reach), with its metrics on
// d.Registry.
func NewAutomationEvaluateWorker(d Deps) *AutomationEvaluateWorker {
	return &AutomationEvaluateWorker{
		Engine:  &automation.Engine{DB: d.DB, Bus: d.Bus, Audit: audit.NewRecorder(d.Bus)},
		metrics: newAutomationMetrics(d.Registry),
	}
}

// Work implements river.Worker.
func (w *AutomationEvaluateWorker) Work(ctx context.Context, job *river.Job[jobs.AutomationEvaluate]) error {
	outcomes, err := w.Engine.Evaluate(ctx, job.Args)
	w.metrics.observe(job.Args.Trigger, outcomes, err)
	return err
}

// observe counts the outcomes of rules evaluated for trigger.
func (m *automationMetrics) observe(trigger string, outcomes []automation.Outcome, err error) {
	for _, o := range outcomes {
		m.evaluations.WithLabelValues(trigger, strings.ToLower(o.Status)).Inc()
		if o.Limit != "" {
			m.limited.WithLabelValues(o.Limit).Inc()
		}
		if trigger != automation.TriggerScheduled { // a run's evaluations follow no change
			m.latency.Observe(o.Latency.Seconds())
		}
		for _, a := range o.Actions {
			outcome := "success"
			if !a.OK {
				outcome = "failed"
			}
			m.actions.WithLabelValues(a.Type, outcome).Inc()
		}
	}
	if err != nil {
		m.evaluations.WithLabelValues(trigger, "error").Inc()
	}
}

// automationMetrics are the automation metrics the jobs dashboard reads.
type automationMetrics struct {
	evaluations *prometheus.CounterVec
	actions     *prometheus.CounterVec
	limited     *prometheus.CounterVec
	latency     prometheus.Histogram
	runs        *prometheus.CounterVec
}

// RunOutcomes label taskweave_automation_scheduled_runs_total.
var runOutcomes = []string{"done", "truncated", "skipped", "error"}

// newAutomationMetrics registers the metrics on reg (nil: unregistered); a second
// client on the same registry shares the first one's collectors. Every label
// combination exists from the start at 0, so the dashboard's series never read "no data".
func newAutomationMetrics(reg *prometheus.Registry) *automationMetrics {
	m := &automationMetrics{
		evaluations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_automation_evaluations_total",
			Help: "Automation rules evaluated for a triggering event, by trigger and outcome: success (actions ran), skipped, failed (an action was refused), or error (an evaluation job hit an infrastructure error and is retried).",
		}, []string{"trigger", "outcome"}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_automation_actions_total",
			Help: "Automation actions run, by type and outcome: success, or failed (refused, or rolled back with a refused action of the same rule).",
		}, []string{"type", "outcome"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_automation_limited_total",
			Help: "Automation rules that would have acted but were skipped, by limit: budget (the chain's action budget spent), rate (the project's action rate reached) or creator (the rule's creator may no longer have it act; the rule was disabled).",
		}, []string{"limit"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "taskweave_automation_event_latency_seconds",
			Help:    "Time from a triggering change to its rule's execution row (with the rule's actions, for a rule that acted).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taskweave_automation_scheduled_runs_total",
			Help: "Runs of scheduled rules (one per due slot), by outcome: done, truncated (done on the first 1,000 issues the filter matched), skipped (the rule was disabled, or its creator may no longer have it act) or error (an infrastructure error; the run is retried).",
		}, []string{"outcome"}),
	}
	if reg != nil {
		m.evaluations = metric.Register(reg, m.evaluations)
		m.actions = metric.Register(reg, m.actions)
		m.limited = metric.Register(reg, m.limited)
		m.latency = metric.Register(reg, m.latency)
		m.runs = metric.Register(reg, m.runs)
	}
	for _, o := range runOutcomes {
		m.runs.WithLabelValues(o)
	}
	for _, t := range automation.Triggers {
		for _, o := range []string{"success", "skipped", "failed", "error"} {
			m.evaluations.WithLabelValues(t, o)
		}
	}
	for _, l := range automation.LimitKinds {
		m.limited.WithLabelValues(l)
	}
	for _, t := range automation.ActionTypes {
		m.actions.WithLabelValues(t, "success")
		m.actions.WithLabelValues(t, "failed")
	}
	return m
}
