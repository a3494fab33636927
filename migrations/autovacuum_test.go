package migrations_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store/storetest"
)

// TestHotTablesVacuumAfterOnePercent: migration 0035 gives the tables written all day
// insert- and update-driven vacuums after 1,000 to 5,000 rows plus 1 % of the table,
// instead of Postgres's 20 %; the list's index-only scans depend on it
// (docs/performance.md#fresh-rows).
func TestHotTablesVacuumAfterOnePercent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	options := func(table string) map[string]string {
		var opts []string
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class
			WHERE oid = $1::regclass`, table).Scan(&opts))
		out := map[string]string{}
		for _, o := range opts {
			k, v, _ := strings.Cut(o, "=")
			out[k] = v
		}
		return out
	}
	for _, table := range []string{"issues", "custom_field_values", "issue_filter_terms", "issue_labels", "comments",
		"issue_activities", "notifications", "river_job", "webhook_deliveries"} {
		o := options(table)
		require.Equal(t, "0.01", o["autovacuum_vacuum_insert_scale_factor"], table)
		require.Contains(t, []string{"1000", "5000"}, o["autovacuum_vacuum_insert_threshold"], table)
	}
	require.Equal(t, map[string]string{"autovacuum_vacuum_threshold": "1000", "autovacuum_vacuum_scale_factor": "0"},
		options("issue_counts"))
	require.Equal(t, "70", options("webhook_deliveries")["fillfactor"], "0016's fillfactor stays")
}
