package audit

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// planNodes collects every node type and index name of an EXPLAIN (FORMAT JSON) plan.
func planNodes(node map[string]any, types, indexes map[string]bool) {
	if t, ok := node["Node Type"].(string); ok {
		// A scan of a partition without rows costs nothing: the months ahead, empty here.
		if r, _ := node["Relation Name"].(string); t == "Seq Scan" && r != "" && !seededPartitions[r] {
			t = "Seq Scan of an empty partition"
		}
		types[t] = true
	}
	if i, ok := node["Index Name"].(string); ok {
		indexes[i] = true
	}
	for _, child := range asSlice(node["Plans"]) {
		planNodes(child.(map[string]any), types, indexes)
	}
}

// indexOnlyScans collects the indexes an EXPLAIN JSON plan reads by index-only scans.
func indexOnlyScans(node map[string]any, indexes map[string]bool) {
	if t, _ := node["Node Type"].(string); t == "Index Only Scan" {
		indexes[node["Index Name"].(string)] = true
	}
	for _, child := range asSlice(node["Plans"]) {
		indexOnlyScans(child.(map[string]any), indexes)
	}
}

// seededPartitions are the months TestListQueriesUseTheFilterIndexes fills.
var seededPartitions = map[string]bool{"audit_events_p2026_01": true, "audit_events_p2026_02": true, "audit_events_p2026_03": true}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestListQueriesUseTheFilterIndexes runs EXPLAIN on the exact statements List sends,
// over 20,000 analyzed rows in three monthly partitions (January 20 to March 2) (50 users, 20 projects, a rare action, 1% level ALL). It
// proves that, with these statistics, the planner answers each filtered page from the
// filter's index (never a sequential scan), and that the counts of the selective
// filters avoid one too. It does not prove the same plans for every data shape: the
// planner may rightly prefer the time index when a filter matches most rows.
func TestListQueriesUseTheFilterIndexes(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	// The rows' month has its partition, as the maintenance job would have made it.
	_, err := EnsurePartitions(ctx, db.Bun, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `
		INSERT INTO users (id, email, display_name) SELECT gen_random_uuid(), 'u' || i || '@example.com', 'U' || i FROM generate_series(1, 50) AS i;
		INSERT INTO projects (id, key, name, owner_id)
			SELECT gen_random_uuid(), 'PL' || i, 'P', (SELECT min(id::text)::uuid FROM users) FROM generate_series(1, 20) AS i;
		WITH u AS (SELECT array_agg(id ORDER BY id) AS ids FROM users),
		     p AS (SELECT array_agg(id ORDER BY id) AS ids FROM projects)
		INSERT INTO audit_events (id, "timestamp", user_id, user_email, project_id, action, level)
		SELECT gen_random_uuid(), timestamptz '2026-01-20' + i * interval '3 minutes', u.ids[i % 50 + 1], 'x@example.com',
			CASE WHEN i % 5 <> 0 THEN p.ids[i % 20 + 1] END,
			CASE WHEN i % 200 = 7 THEN 'SLA_BREACHED' WHEN i % 100 = 0 THEN 'ISSUE_VIEWED' WHEN i % 3 = 0 THEN 'LOGIN_SUCCESS' ELSE 'ISSUE_UPDATED' END,
			CASE WHEN i % 200 = 7 THEN 'WRITE' WHEN i % 100 = 0 THEN 'ALL' WHEN i % 3 = 0 THEN 'SECURITY' ELSE 'WRITE' END
		FROM generate_series(1, 20000) AS i, u, p;
		ANALYZE audit_events;`)
	require.NoError(t, err)
	var user, project uuid.UUID
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT (SELECT id FROM users ORDER BY id LIMIT 1), (SELECT id FROM projects ORDER BY id OFFSET 1 LIMIT 1)").Scan(&user, &project))
	from := time.Date(2026, 2, 5, 0, 0, 0, 0, time.UTC)
	to := from.Add(24 * time.Hour)

	// A plan names the indexes of the partitions; each is read as the index of the
	// partitioned table it belongs to (audit_events_p2026_01_project_id_timestamp_idx is
	// audit_events_project_time).
	parentIndex := map[string]string{}
	rows, err := db.Pool.Query(ctx, `SELECT c.relname, p.relname FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE c.relkind = 'i'`)
	require.NoError(t, err)
	for rows.Next() {
		var child, parent string
		require.NoError(t, rows.Scan(&child, &parent))
		parentIndex[child] = parent
	}
	require.NoError(t, rows.Err())
	require.Equal(t, "audit_events_project_time", parentIndex["audit_events_p2026_01_project_id_timestamp_id_idx"])

	explain := func(q string, args []any) (types, indexes map[string]bool) {
		t.Helper()
		var raw []byte
		require.NoError(t, db.Pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+q, args...).Scan(&raw))
		var plans []map[string]any
		require.NoError(t, json.Unmarshal(raw, &plans))
		types, indexes = map[string]bool{}, map[string]bool{}
		planNodes(plans[0]["Plan"].(map[string]any), types, indexes)
		for name := range indexes {
			if p, ok := parentIndex[name]; ok {
				indexes[p] = true
			}
		}
		return types, indexes
	}
	for name, c := range map[string]struct {
		f     Filter
		index string
		count bool // the count of this filter is selective enough to need the index too
	}{
		"no filter":  {Filter{}, "audit_events_time", false},
		"time range": {Filter{From: &from, To: &to}, "audit_events_time", true},
		"user":       {Filter{UserID: &user}, "audit_events_user_time", true},
		"project":    {Filter{ProjectID: &project}, "audit_events_project_time", true},
		"action":     {Filter{Action: "SLA_BREACHED"}, "audit_events_action_time", true},
		"level ALL":  {Filter{Level: LevelAll}, "audit_events_level_time", true},
	} {
		q, args := c.f.pageQuery(nil, 50, 50)
		types, indexes := explain(q, args)
		require.False(t, types["Seq Scan"], "%s page: %v", name, types)
		require.True(t, indexes[c.index], "%s page uses %s: %v %v", name, c.index, indexes, types)
		if c.count {
			q, args = c.f.countQuery(store.PageCountLimit(50))
			types, indexes = explain(q, args)
			require.False(t, types["Seq Scan"], "%s count: %v", name, types)
			require.NotEmpty(t, indexes, "%s count", name)
		}
	}
}

// rowsRemovedByFilter sums "Rows Removed by Filter" over an EXPLAIN ANALYZE JSON plan:
// the rows an index walk read and threw away.
func rowsRemovedByFilter(node map[string]any) float64 {
	n, _ := node["Rows Removed by Filter"].(float64)
	if loops, ok := node["Actual Loops"].(float64); ok && loops > 1 {
		n *= loops
	}
	for _, child := range asSlice(node["Plans"]) {
		n += rowsRemovedByFilter(child.(map[string]any))
	}
	return n
}

// TestProjectPageAcrossMonthsReadsItsOwnRows: a project whose rows come in bursts (a
// thousand, then nine thousand of others) over three monthly partitions. Its page 0
// merges the partitions in list order; each partition's project index gives its rows
// in that order ("timestamp" DESC, id DESC), so the page reads the project's rows
// only. Without id in the index the planner walked every partition's time index and
// tested the project on each row, reading all the others' rows of the newest bursts;
// selecting whole rows, it may still do so where the statistics give the project a
// big share of a month, so the page's keys come from the project index alone.
func TestProjectPageAcrossMonthsReadsItsOwnRows(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	_, err := EnsurePartitions(ctx, db.Bun, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `
		INSERT INTO users (id, email, display_name) VALUES ('00000000-0000-0000-0000-0000000000aa', 'a@example.com', 'A');
		INSERT INTO projects (id, key, name, owner_id) SELECT ('00000000-0000-0000-0000-0000000000' || i)::uuid, 'PB' || i, 'P',
			'00000000-0000-0000-0000-0000000000aa' FROM generate_series(10, 19) AS i;
		INSERT INTO audit_events (id, "timestamp", user_email, project_id, action, level)
		SELECT gen_random_uuid(), timestamptz '2026-01-20' + i * interval '3 minutes', 'x@example.com',
			('00000000-0000-0000-0000-0000000000' || CASE WHEN (i / 1000) % 10 = 0 THEN 10 ELSE 11 + i % 9 END)::uuid,
			'ISSUE_UPDATED', 'WRITE'
		FROM generate_series(1, 35000) AS i;
		ANALYZE audit_events;`)
	require.NoError(t, err)
	project := uuid.MustParse("00000000-0000-0000-0000-000000000010")
	q, args := Filter{ProjectID: &project}.pageQuery(nil, 0, 50)
	var raw []byte
	require.NoError(t, db.Pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+q, args...).Scan(&raw))
	var plans []map[string]any
	require.NoError(t, json.Unmarshal(raw, &plans))
	plan := plans[0]["Plan"].(map[string]any)
	require.Less(t, rowsRemovedByFilter(plan), 500.0, "%s", raw)
	// Deterministic whatever the planner's estimates at this size: the rows come in
	// order from each partition's project index, nothing is sorted.
	types, indexes := map[string]bool{}, map[string]bool{}
	planNodes(plan, types, indexes)
	require.False(t, types["Sort"] || types["Incremental Sort"], "%v", types)
	// The keys come from each month's project index alone; only the page's rows are
	// read from the heap (pageQuery).
	keyIndexes := map[string]bool{}
	indexOnlyScans(plan, keyIndexes)
	for month := range seededPartitions {
		require.True(t, keyIndexes[month+"_project_id_timestamp_id_idx"], "%s: %v", month, keyIndexes)
	}

	// The count reads the project's rows by its index too, never a whole partition (it
	// may sort them, reading the first 1,000 of the 3,999).
	q, args = Filter{ProjectID: &project}.countQuery(store.PageCountLimit(0))
	require.NoError(t, db.Pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+q, args...).Scan(&raw))
	require.NoError(t, json.Unmarshal(raw, &plans))
	plan = plans[0]["Plan"].(map[string]any)
	types, indexes = map[string]bool{}, map[string]bool{}
	planNodes(plan, types, indexes)
	require.False(t, types["Seq Scan"], "%v", types)
	require.Less(t, rowsRemovedByFilter(plan), 500.0, "%s", raw)

	events, total, exact, err := List(ctx, db.Pool, Filter{ProjectID: &project}, nil, 0, 50)
	require.NoError(t, err)
	require.Len(t, events, 50)
	require.Equal(t, []any{store.PageCountAhead, false}, []any{total, exact}, "3,999 rows, counted 1,000 ahead")
	// From offset 3,000 the count reaches 4,000, past the project's last row: exact.
	_, total, exact, err = List(ctx, db.Pool, Filter{ProjectID: &project}, nil, 3000, 50)
	require.NoError(t, err)
	require.Equal(t, []any{3999, true}, []any{total, exact}, "rows 1-999, 10000-10999, 20000-20999, 30000-30999")
	for i := 1; i < len(events); i++ {
		require.True(t, events[i].Timestamp.Before(events[i-1].Timestamp), "newest first")
	}
}
