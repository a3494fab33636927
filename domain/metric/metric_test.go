package metric_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/metric"
)

// A collector registered twice is the first one; a name clash with other labels panics.
func TestRegister(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "taskweave_test_total", Help: "Test."}
	first := metric.Register(reg, prometheus.NewCounterVec(opts, []string{"outcome"}))
	again := metric.Register(reg, prometheus.NewCounterVec(opts, []string{"outcome"}))
	require.Same(t, first, again)
	again.WithLabelValues("ok").Inc()
	families, err := reg.Gather()
	require.NoError(t, err)
	require.Len(t, families, 1)
	require.Equal(t, 1.0, families[0].GetMetric()[0].GetCounter().GetValue())

	require.Panics(t, func() {
		metric.Register(reg, prometheus.NewCounterVec(opts, []string{"other"}))
	})
}
