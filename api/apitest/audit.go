package apitest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// SetAuditLevel switches one audit level of h's database on or off.
func SetAuditLevel(t testing.TB, h *Harness, level string, on bool) {
	t.Helper()
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE audit_config SET enabled = $2 WHERE level = $1", level, on)
	require.NoError(t, err)
}

// IssueAuditJobs lists the audit actions enqueued for an issue, oldest first.
func IssueAuditJobs(t testing.TB, h *Harness, issueID string) []string {
	t.Helper()
	rows, err := h.DB.Pool.Query(context.Background(),
		"SELECT args->>'action' FROM river_job WHERE kind = 'audit.record' AND args->>'resourceId' = $1 ORDER BY id", issueID)
	require.NoError(t, err)
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	return out
}
