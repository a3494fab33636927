package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/audit"
)

// TestAuditAcrossMonthPartitions lists, pages, filters and exports rows of two monthly
// partitions and the default one: every page across the bound continues the one
// before it, filters and windows that span the bound see both months, and the export
// walks the three partitions in one order.
func TestAuditAcrossMonthPartitions(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	admin := auditAdmin(h)
	key := apitest.PostProject(t, h, admin.Access)
	pid := uuid.MustParse(h.Do("GET", "/api/v1/projects/"+key, nil, admin.Access).JSON(t)["id"].(string))
	ctx := context.Background()
	// February to May 2026 get partitions; January's rows land in the default one.
	_, err := audit.EnsurePartitions(ctx, h.DB.Bun, time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)

	// 40 rows each side of March 1st 00:00 UTC, one a minute, every other one of the
	// project; 5 in January. Rows are numbered oldest first.
	bound := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var rows []auditRow
	for i := 0; i < 80; i++ {
		r := auditRow{ID: auditID(100 + i), At: bound.Add(time.Duration(i-40) * time.Minute), Action: "ISSUE_UPDATED", Level: "WRITE"}
		if i%2 == 0 {
			r.ProjectID = &pid
		}
		rows = append(rows, r)
	}
	for i := 0; i < 5; i++ {
		rows = append(rows, auditRow{ID: auditID(10 + i), At: time.Date(2026, 1, 20, 0, i, 0, 0, time.UTC), Action: "LOGIN_SUCCESS", Level: "SECURITY"})
	}
	auditSeed(t, h, rows...)
	require.Equal(t, 40, h.Count("SELECT count(*) FROM audit_events_p2026_02"))
	require.Equal(t, 40, h.Count("SELECT count(*) FROM audit_events_p2026_03"))
	require.Equal(t, 5, h.Count(`SELECT count(*) FROM audit_events_default WHERE "timestamp" < '2026-02-01'`))

	// want are the ids newest first of the rows numbered in [from, to) (100.. the
	// February-March rows) that keep, followed by January's when withJanuary.
	want := func(keep func(i int) bool, withJanuary bool) []string {
		var out []string
		for i := 79; i >= 0; i-- {
			if keep(i) {
				out = append(out, auditID(100+i).String())
			}
		}
		if withJanuary {
			for i := 4; i >= 0; i-- {
				out = append(out, auditID(10+i).String())
			}
		}
		return out
	}
	all := func(int) bool { return true }
	project := func(i int) bool { return i%2 == 0 }
	pages := func(path string, size int) []string {
		t.Helper()
		var ids []string
		for page := 0; ; page++ {
			r := h.Do("GET", fmt.Sprintf("%s%ssize=%d&page=%d", path, map[bool]string{true: "&", false: "?"}[strings.Contains(path, "?")], size, page), nil, admin.Access)
			got := auditIDs(t, r)
			if len(got) == 0 {
				return ids
			}
			ids = append(ids, got...)
		}
	}

	// Pages of 7 across both bounds (March to February, February to January).
	require.Equal(t, want(all, true), pages("/api/v1/admin/audit", 7))
	p := h.Do("GET", "/api/v1/admin/audit?size=7&page=5", nil, admin.Access).JSON(t)
	require.Equal(t, 85.0, p["totalElements"])
	// Page 5 holds rows 44..38 of the 80: four of March, three of February.
	require.Equal(t, want(func(i int) bool { return i >= 38 && i <= 44 }, false), auditIDs(t, h.Do("GET", "/api/v1/admin/audit?size=7&page=5", nil, admin.Access)))

	// A window over the bound, from inclusive and to exclusive on each side of it.
	at := func(i int) string {
		return url.QueryEscape(bound.Add(time.Duration(i-40) * time.Minute).Format(time.RFC3339))
	}
	window := func(i int) bool { return i >= 30 && i < 50 }
	require.Equal(t, want(window, false), pages("/api/v1/admin/audit?from="+at(30)+"&to="+at(50), 6))
	// The project's own list across the bound.
	require.Equal(t, want(project, false), pages("/api/v1/projects/"+key+"/audit", 9))
	r := h.Do("GET", "/api/v1/projects/"+key+"/audit?size=9", nil, admin.Access).JSON(t)
	require.Equal(t, 40.0, r["totalElements"])
	require.Equal(t, want(func(i int) bool { return project(i) && window(i) }, false),
		pages("/api/v1/projects/"+key+"/audit?from="+at(30)+"&to="+at(50), 4))
	require.Equal(t, want(func(int) bool { return false }, true), pages("/api/v1/admin/audit?level=SECURITY", 2))

	// The export walks the three partitions in the list's order.
	export := h.Do("GET", "/api/v1/admin/audit/export", nil, admin.Access)
	require.Equal(t, http.StatusOK, export.Status)
	var ids []string
	for _, e := range export.Array(t) {
		ids = append(ids, e.(map[string]any)["id"].(string))
	}
	require.Equal(t, want(all, true), ids)
	export = h.Do("GET", "/api/v1/admin/audit/export?format=csv&from="+at(30)+"&to="+at(50), nil, admin.Access)
	require.Equal(t, http.StatusOK, export.Status)
	require.Equal(t, 1+20, strings.Count(strings.TrimSuffix(string(export.Body), "\n"), "\n")+1, "a header and the window's rows")
}
