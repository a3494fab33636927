package task

import "github.com/prometheus/client_golang/prometheus"

// Metrics counts finished tasks and the items tasks work through (docs/operations.md).
type Metrics struct {
	tasks     *prometheus.CounterVec
	itemCount *prometheus.CounterVec
}

// NewMetrics registers the task metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		tasks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "taskweave_tasks_finished_total",
			Help: "Tasks finished, by kind and final state."}, []string{"kind", "state"}),
		itemCount: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "taskweave_task_items_total",
			Help: "Items tasks worked through, by kind and outcome (applied, failed)."}, []string{"kind", "outcome"}),
	}
	if reg != nil {
		reg.MustRegister(m.tasks, m.itemCount)
	}
	for _, k := range []string{KindBulkChange, KindExport, KindImport, KindUndo} {
		for _, s := range []string{StateSucceeded, StateFailed, StateCancelled} {
			m.tasks.WithLabelValues(k, s)
		}
		m.itemCount.WithLabelValues(k, "applied")
		m.itemCount.WithLabelValues(k, "failed")
	}
	return m
}

func (m *Metrics) finished(kind, state string) {
	if m != nil {
		m.tasks.WithLabelValues(kind, state).Inc()
	}
}

func (m *Metrics) items(kind string, applied, failed int) {
	if m != nil {
		m.itemCount.WithLabelValues(kind, "applied").Add(float64(applied))
		m.itemCount.WithLabelValues(kind, "failed").Add(float64(failed))
	}
}
