package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pageTotals are the counting members of a page: totalElements, totalPages, last,
// totalElementsExact, and the number of rows it holds.
func pageTotals(t *testing.T, p map[string]any) []any {
	t.Helper()
	return []any{p["totalElements"], p["totalPages"], p["last"], p["totalElementsExact"], len(p["content"].([]any))}
}

// TestAuditPagesCountAThousandAhead: over 1,060 rows of a project the audit lists count
// 1,000 past the page's first (store.PageCountAhead) and say the total is a bound; a
// page near the end counts to the end and is exact, and a filter matching fewer is
// exact from page 0.
func TestAuditPagesCountAThousandAhead(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h := e.h
	_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO audit_events (id, "timestamp", user_email, project_id, action, level)
		SELECT gen_random_uuid(), $1::timestamptz + i * interval '1 second', 'system', $2::uuid, 'ISSUE_UPDATED', 'WRITE'
		FROM generate_series(1, 1060) AS i`, auditT0, e.p1)
	require.NoError(t, err)

	for _, path := range []string{"/api/v1/admin/audit", "/api/v1/projects/" + e.key1 + "/audit"} {
		get := func(query string) map[string]any {
			t.Helper()
			// Only the seeded rows: the set-up's own entries stay out of the counts.
			r := h.Do("GET", path+"?action=ISSUE_UPDATED&"+query, nil, e.admin.Access)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			return r.JSON(t)
		}
		require.Equal(t, []any{1000.0, 20.0, false, false, 50}, pageTotals(t, get("")), path)
		require.Equal(t, []any{1000.0, 5.0, false, false, 200}, pageTotals(t, get("size=200")), path)
		// From offset 1,000 the count reaches 2,000: past the last row, so exact.
		require.Equal(t, []any{1060.0, 22.0, false, true, 50}, pageTotals(t, get("page=20")), path)
		require.Equal(t, []any{1060.0, 22.0, true, true, 10}, pageTotals(t, get("page=21")), path)
		require.Equal(t, []any{1060.0, 22.0, true, true, 0}, pageTotals(t, get("page=30")), path)
		// Page 10 (offset 500) counts up to 1,500: past the last row, so exact.
		require.Equal(t, []any{1060.0, 22.0, false, true, 50}, pageTotals(t, get("page=10")), path)
		to := url.QueryEscape(auditT0.Add(101 * time.Second).Format(time.RFC3339))
		require.Equal(t, []any{100.0, 2.0, false, true, 50}, pageTotals(t, get("to="+to)), path)
	}
}

// TestJobPagesCountTenThousandAhead: the same bound on the admin jobs list, over 10,005
// completed jobs; another state's count is exact.
func TestJobPagesCountTenThousandAhead(t *testing.T) {
	t.Parallel()
	e := jobSetup(t)
	h := e.h
	_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO river_job (args, kind, queue, state, attempt, max_attempts, priority,
			scheduled_at, finalized_at, attempted_at, tags, metadata)
		SELECT '{}'::jsonb, 'bench.done', 'default', 'completed', 1, 1, 1, now() - interval '1 hour', now() - interval '1 minute',
			now() - interval '1 minute', '{}', '{}'
		FROM generate_series(1, 10005)`)
	require.NoError(t, err)
	jobInsert(t, h, jobSpec{kind: "k", state: "available"})
	get := func(query string) map[string]any {
		t.Helper()
		r := h.Do("GET", "/api/v1/admin/jobs?"+query, nil, e.admin.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return r.JSON(t)
	}
	require.Equal(t, []any{10000.0, 500.0, false, false, 20}, pageTotals(t, get("state=completed")))
	require.Equal(t, []any{10000.0, 500.0, false, false, 20}, pageTotals(t, get("")))
	require.Equal(t, []any{10005.0, 51.0, true, true, 5}, pageTotals(t, get(fmt.Sprintf("state=completed&size=200&page=%d", 50))))
	require.Equal(t, []any{1.0, 1.0, true, true, 1}, pageTotals(t, get("state=available")))
}
