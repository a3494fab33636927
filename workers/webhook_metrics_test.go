package workers

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// TestWebhookOutcomesExistAtZero: every delivery outcome is exported before the first
// delivery, so the dashboards' failed-deliveries and success-ratio panels read 0.
func TestWebhookOutcomesExistAtZero(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	newWebhookMetrics(reg)
	newWebhookMetrics(reg) // a second client on the registry shares the series
	mfs, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "taskweave_webhook_deliveries_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	require.Equal(t, map[string]float64{"delivered": 0, "retry_scheduled": 0, "failed": 0, "skipped": 0}, got)
}
