package audit

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// relations collects the relation names of an EXPLAIN JSON plan.
func relations(node map[string]any, out map[string]bool) {
	if r, ok := node["Relation Name"].(string); ok {
		out[r] = true
	}
	for _, child := range asSlice(node["Plans"]) {
		relations(child.(map[string]any), out)
	}
}

// genericPlanRelations prepares q as name on conn (whose plan_cache_mode is
// force_generic_plan) and returns the relations of its generic plan for args.
func genericPlanRelations(t *testing.T, conn *pgxpool.Conn, name, q string, args []any) map[string]bool {
	t.Helper()
	ctx := context.Background()
	_, err := conn.Exec(ctx, "PREPARE "+name+" AS "+q)
	require.NoError(t, err)
	// EXECUTE takes its arguments as literals.
	params := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case uuid.UUID:
			params[i] = "'" + v.String() + "'"
		case time.Time:
			params[i] = "'" + v.Format(time.RFC3339Nano) + "'"
		default:
			t.Fatalf("argument %T", a)
		}
	}
	var raw []byte
	require.NoError(t, conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) EXECUTE "+name+"("+strings.Join(params, ", ")+")").Scan(&raw))
	var plans []map[string]any
	require.NoError(t, json.Unmarshal(raw, &plans))
	out := map[string]bool{}
	relations(plans[0]["Plan"].(map[string]any), out)
	require.NotEmpty(t, out, "%s", raw)
	return out
}

// TestListWindowPagesAsEveryMonth: a project's log over January to March (3,000 rows,
// the newest 2,000 in February and March) and another's (100 rows in January, 10 in
// March). Read on 15 March, the first's pages come from the window (February on) and
// are the pages of the whole log, with the same totals; the second's window holds too
// few rows for the bound, so its count and page read every month.
func TestListWindowPagesAsEveryMonth(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	_, err := EnsurePartitions(ctx, db.Bun, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	big, small := uuid.MustParse("00000000-0000-0000-0000-000000000010"), uuid.MustParse("00000000-0000-0000-0000-000000000011")
	for _, q := range []string{
		`INSERT INTO users (id, email, display_name) VALUES ('00000000-0000-0000-0000-0000000000aa', 'a@example.com', 'A')`,
		`INSERT INTO projects (id, key, name, owner_id) VALUES ($1, 'PW1', 'P', '00000000-0000-0000-0000-0000000000aa'),
			($2, 'PW2', 'P', '00000000-0000-0000-0000-0000000000aa')`,
		`INSERT INTO audit_events (id, "timestamp", user_email, project_id, action, level)
		SELECT gen_random_uuid(), timestamptz '2026-01-01' + i * interval '36 minutes', 'x@example.com', $1, 'ISSUE_UPDATED', 'WRITE'
		FROM generate_series(1, 3000) AS i`,
		`INSERT INTO audit_events (id, "timestamp", user_email, project_id, action, level)
		SELECT gen_random_uuid(), timestamptz '2026-01-05' + i * interval '1 minute', 'x@example.com', $1::uuid, 'ISSUE_UPDATED', 'WRITE'
		FROM generate_series(1, 100) AS i`,
		`INSERT INTO audit_events (id, "timestamp", user_email, project_id, action, level)
		SELECT gen_random_uuid(), timestamptz '2026-03-05' + i * interval '1 minute', 'x@example.com', $1::uuid, 'ISSUE_UPDATED', 'WRITE'
		FROM generate_series(1, 10) AS i`,
		`ANALYZE audit_events`,
	} {
		var args []any
		switch {
		case strings.Contains(q, "$2"):
			args = []any{big, small}
		case strings.Contains(q, "$1::uuid"):
			args = []any{small}
		case strings.Contains(q, "$1"):
			args = []any{big}
		}
		_, err = db.Pool.Exec(ctx, q, args...)
		require.NoError(t, err)
	}
	var inWindow int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM audit_events WHERE project_id = $1 AND "timestamp" >= '2026-02-01'`,
		big).Scan(&inWindow))
	require.Greater(t, inWindow, 1600, "the window alone reaches the bound of the pages below")
	now := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)

	ids := func(events []store.AuditEvent) []uuid.UUID {
		out := make([]uuid.UUID, len(events))
		for i := range events {
			out[i] = events[i].ID
		}
		return out
	}
	// want is the page of the whole log, read by SQL of its own.
	want := func(project uuid.UUID, offset, limit int) []uuid.UUID {
		rows, err := db.Pool.Query(ctx, `SELECT id FROM audit_events WHERE project_id = $1 ORDER BY "timestamp" DESC, id DESC
			OFFSET $2 LIMIT $3`, project, offset, limit)
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		require.NoError(t, err)
		return out
	}
	for _, c := range []struct {
		project       uuid.UUID
		offset, limit int
		total         int
		exact         bool
	}{
		{big, 0, 50, 1000, false},
		{big, 550, 50, 1550, false},
		{big, 950, 200, 1950, false},
		{big, 2500, 50, 3000, true}, // the window holds too few: every month
		{big, 2990, 50, 3000, true},
		{small, 0, 50, 110, true}, // 10 rows in the window, 100 before it
		{small, 60, 50, 110, true},
	} {
		events, total, exact, err := listAt(ctx, db.Pool, Filter{ProjectID: &c.project}, nil, c.offset, c.limit, now)
		require.NoError(t, err)
		require.Equal(t, want(c.project, c.offset, c.limit), ids(events), "%v at %d", c.project, c.offset)
		require.Equal(t, []any{c.total, c.exact}, []any{total, exact}, "%v at %d", c.project, c.offset)
	}

	// The plans: the window's statements hold only the window's partitions, and those
	// of a time range only its month's, in the generic plan of a prepared statement too
	// (as pgx runs them after five executions).
	conn, err := db.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan")
	require.NoError(t, err)
	genericRelations := func(name, q string, args []any) map[string]bool {
		t.Helper()
		return genericPlanRelations(t, conn, name, q, args)
	}
	since := monthStart(now).AddDate(0, -listWindows[0], 0)
	window := Filter{ProjectID: &big}.within(&since, nil)
	q, args := window.pageQuery(nil, 0, 50)
	for r := range genericRelations("window_page", q, args) {
		require.NotEqual(t, "audit_events_p2026_01", r, "the window's page plans January")
	}
	q, args = window.countQuery(store.PageCountLimit(0))
	for r := range genericRelations("window_count", q, args) {
		require.NotEqual(t, "audit_events_p2026_01", r, "the window's count plans January")
	}
	from, to := time.Date(2026, 3, 14, 11, 0, 0, 0, time.UTC), time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	hour := Filter{ProjectID: &big, From: &from, To: &to}
	q, args = hour.pageQuery(nil, 0, 50)
	require.Equal(t, map[string]bool{"audit_events_p2026_03": true}, genericRelations("hour_page", q, args))
	q, args = hour.countQuery(store.PageCountLimit(0))
	require.Equal(t, map[string]bool{"audit_events_p2026_03": true}, genericRelations("hour_count", q, args))
	// The hour's rows all the same: one, at 11:24.
	events, total, exact, err := listAt(ctx, db.Pool, hour, nil, 0, 50, now)
	require.NoError(t, err)
	require.Equal(t, []any{1, true, 1}, []any{total, exact, len(events)})
	from, to = time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 1, 0, 0, 0, time.UTC)
	events, total, exact, err = listAt(ctx, db.Pool, Filter{ProjectID: &big, From: &from, To: &to}, nil, 0, 50, now)
	require.NoError(t, err)
	require.Equal(t, []any{3, true, 3}, []any{total, exact, len(events)}, "across the months' bound")
	// To before the window: the rows of January, no window.
	to = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	events, total, exact, err = listAt(ctx, db.Pool, Filter{ProjectID: &big, To: &to}, nil, 0, 50, now)
	require.NoError(t, err)
	require.Equal(t, []any{1000, false, 50}, []any{total, exact, len(events)})
	require.True(t, events[0].Timestamp.Before(to) && !events[0].Timestamp.Before(to.Add(-time.Hour)), "%v", events[0].Timestamp)
}

// TestListWindowsReachBackToTheNewestRows: a project whose newest rows are months old
// (20 in February 2026, 300 from October to November 2025, 1,500 in June 2025), read on
// 15 March 2026 beside another project's rows in every month. Counted window by window
// (listWindows), its pages and totals are those of the whole log, and each page is read
// in the months that hold it alone: the generic plan of the page statement holds only
// those months' partitions, not the 15 months of the log and the default partition.
func TestListWindowsReachBackToTheNewestRows(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	for m := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC); !m.After(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)); m = m.AddDate(0, 1, 0) {
		_, err := EnsurePartitions(ctx, db.Bun, m)
		require.NoError(t, err)
	}
	quiet, busy := uuid.MustParse("00000000-0000-0000-0000-000000000020"), uuid.MustParse("00000000-0000-0000-0000-000000000021")
	_, err := db.Pool.Exec(ctx, `INSERT INTO users (id, email, display_name) VALUES ('00000000-0000-0000-0000-0000000000aa', 'a@example.com', 'A')`)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `INSERT INTO projects (id, key, name, owner_id) VALUES ($1, 'PQ1', 'P', '00000000-0000-0000-0000-0000000000aa'),
			($2, 'PQ2', 'P', '00000000-0000-0000-0000-0000000000aa')`, quiet, busy)
	require.NoError(t, err)
	for _, r := range []struct {
		project uuid.UUID
		start   string
		step    string
		n       int
	}{
		{quiet, "2025-06-01", "25 minutes", 1500},
		{quiet, "2025-10-10", "4 hours", 300},
		{quiet, "2026-02-02", "1 hour", 20},
		{busy, "2025-01-01", "3 hours", 3400},
	} {
		_, err := db.Pool.Exec(ctx, `INSERT INTO audit_events (id, "timestamp", user_email, project_id, action, level)
			SELECT gen_random_uuid(), $2::timestamptz + i * $3::interval, 'x@example.com', $1, 'ISSUE_UPDATED', 'WRITE'
			FROM generate_series(1, $4::int) AS i`, r.project, r.start, r.step, r.n)
		require.NoError(t, err)
	}
	_, err = db.Pool.Exec(ctx, "ANALYZE audit_events")
	require.NoError(t, err)
	now := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)

	conn, err := db.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan")
	require.NoError(t, err)
	// want is the page and total of the whole log, read by SQL of its own.
	want := func(f Filter, offset, limit int) ([]uuid.UUID, int) {
		cond, args := `project_id = $1`, []any{*f.ProjectID}
		if f.To != nil {
			cond, args = cond+` AND "timestamp" < $2`, append(args, *f.To)
		}
		rows, err := db.Pool.Query(ctx, `SELECT id FROM audit_events WHERE `+cond+` ORDER BY "timestamp" DESC, id DESC`, args...)
		require.NoError(t, err)
		all, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		require.NoError(t, err)
		return all[min(offset, len(all)):min(offset+limit, len(all))], len(all)
	}
	to := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	for i, c := range []struct {
		f             Filter
		offset, limit int
		total         int
		exact         bool
		months        []string // the partitions the page's plan may hold
	}{
		// February's 20 and October's and November's first 30.
		{Filter{ProjectID: &quiet}, 0, 50, 1000, false, []string{"2025_10", "2025_11", "2025_12", "2026_01", "2026_02"}},
		// The last of October and November, the first of June.
		{Filter{ProjectID: &quiet}, 300, 50, 1300, false, []string{"2025_06", "2025_07", "2025_08", "2025_09", "2025_10", "2025_11"}},
		{Filter{ProjectID: &quiet}, 500, 50, 1500, false, []string{"2025_06"}},
		{Filter{ProjectID: &quiet}, 1790, 50, 1820, true, []string{"2025_06"}},
		{Filter{ProjectID: &quiet}, 1820, 50, 1820, true, nil},
		{Filter{ProjectID: &quiet}, 0, 1000, 1000, false, []string{"2025_06", "2025_07", "2025_08", "2025_09", "2025_10", "2025_11",
			"2025_12", "2026_01", "2026_02"}},
		{Filter{ProjectID: &quiet, To: &to}, 250, 100, 1250, false, []string{"2025_06", "2025_07", "2025_08", "2025_09", "2025_10", "2025_11"}},
		{Filter{ProjectID: &busy}, 0, 50, 1000, false, []string{"2026_02", "2026_03"}},
	} {
		events, total, exact, err := listAt(ctx, db.Pool, c.f, nil, c.offset, c.limit, now)
		require.NoError(t, err)
		page, all := want(c.f, c.offset, c.limit)
		got := make([]uuid.UUID, len(events))
		for i := range events {
			got[i] = events[i].ID
		}
		require.Equal(t, page, got, "case %d", i)
		require.Equal(t, []any{c.total, c.exact}, []any{total, exact}, "case %d (%d rows)", i, all)
		if c.months == nil {
			continue
		}
		pf, offset, _, err := windowPage(ctx, db.Pool, c.f, c.offset, c.limit, now)
		require.NoError(t, err)
		q, args := pf.pageQuery(nil, offset, c.limit)
		allowed := map[string]bool{}
		for _, m := range c.months {
			allowed["audit_events_p"+m] = true
		}
		for r := range genericPlanRelations(t, conn, "page"+strconv.Itoa(i), q, args) {
			require.True(t, allowed[r], "case %d: the page plans %s (months %v)", i, r, c.months)
		}
	}
}
