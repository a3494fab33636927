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
	// Executions past their retention.
	river.AddWorker(ws, river.WorkFunc(func(ctx context.Context, job *river.Job[jobs.AutomationCleanup]) error {
		_, err := automation.Cleanup(ctx, d.DB.Bun, job.Args.Retention, automation.CleanupBatch)
		return err
	}))
	retention := cfg.AutomationRetention
	if retention <= 0 {
		retention = automation.DefaultRetention
	}
	return []*river.PeriodicJob{periodic("automation_cleanup", time.Hour, true, jobs.AutomationCleanup{Retention: retention})}
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
	trigger := job.Args.Trigger
	for _, o := range outcomes {
		w.metrics.evaluations.WithLabelValues(trigger, strings.ToLower(o.Status)).Inc()
		if o.Limit != "" {
			w.metrics.limited.WithLabelValues(o.Limit).Inc()
		}
		w.metrics.latency.Observe(o.Latency.Seconds())
		for _, a := range o.Actions {
			outcome := "success"
			if !a.OK {
				outcome = "failed"
			}
			w.metrics.actions.WithLabelValues(a.Type, outcome).Inc()
		}
	}
	if err != nil {
		w.metrics.evaluations.WithLabelValues(trigger, "error").Inc()
	}
	return err
}

// automationMetrics are the automation metrics the jobs dashboard reads.
type automationMetrics struct {
	evaluations *prometheus.CounterVec
	actions     *prometheus.CounterVec
	limited     *prometheus.CounterVec
	latency     prometheus.Histogram
}

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
	}
	if reg != nil {
		m.evaluations = metric.Register(reg, m.evaluations)
		m.actions = metric.Register(reg, m.actions)
		m.limited = metric.Register(reg, m.limited)
		m.latency = metric.Register(reg, m.latency)
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
