package issue

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/store/storetest"
)

// planNode is what the plan test reads of one EXPLAIN (FORMAT JSON) node.
type planNode struct {
	Type     string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Plans    []planNode `json:"Plans"`
}

// walk calls fn on n and every node under it.
func (n planNode) walk(fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}

// TestListPlansUseIndexes runs EXPLAIN on the exact statements List sends, over a
// project of 10,000 vacuumed and analyzed issues with a value of five custom fields
// each, in a table of 50,000 (the rest another project's). It proves that a deep page
// finds its keys by an index-only scan of the order's index, that each cf filter finds
// the issues holding the value through its index (the terms' GIN index, or the TEXT
// values' trigram index), and that neither issues nor custom_field_values is ever
// read by a sequential scan. Other data shapes may rightly get other plans; these are
// the shapes of a busy project.
func TestListPlansUseIndexes(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	p := Project{ID: uuid.New(), Key: "PLAN"}
	field := func(n int) uuid.UUID {
		return uuid.MustParse("00000000-0000-0000-0000-0000000000a" + string(rune('0'+n)))
	}
	option := uuid.MustParse("00000000-0000-0000-0000-0000000000b1")
	_, err := db.Pool.Exec(ctx, strings.ReplaceAll(`
		INSERT INTO users (id, email, display_name) VALUES ('00000000-0000-0000-0000-000000000001', 'plan@example.com', 'Plan');
		INSERT INTO projects (id, key, name, owner_id) VALUES
			($1, 'PLAN', 'P', '00000000-0000-0000-0000-000000000001'),
			('00000000-0000-0000-0000-000000000002', 'OTHER', 'O', '00000000-0000-0000-0000-000000000001');
		INSERT INTO workflows (id, name, project_id) VALUES ('00000000-0000-0000-0000-000000000003', 'W', $1);
		INSERT INTO workflow_statuses (id, workflow_id, name, category) VALUES
			('00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-000000000003', 'To Do', 'TODO');
		INSERT INTO issues (project_id, number, key, title, status_id, reporter_id, updated_at)
		SELECT pr, g, k || '-' || g, 'Issue ' || g, '00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-000000000001',
			now() - make_interval(secs => (g * 7919) % 10000)
		FROM (VALUES ($1::uuid, 'PLAN', 10000), ('00000000-0000-0000-0000-000000000002'::uuid, 'OTHER', 40000)) AS x (pr, k, n),
			generate_series(1, n) AS g;
		INSERT INTO custom_fields (id, project_id, name, type, sort_order) VALUES
			('00000000-0000-0000-0000-0000000000a1', $1, 'Severity', 'DROPDOWN', 1),
			('00000000-0000-0000-0000-0000000000a2', $1, 'Blocked', 'CHECKBOX', 2),
			('00000000-0000-0000-0000-0000000000a3', $1, 'Points', 'NUMBER', 3),
			('00000000-0000-0000-0000-0000000000a4', $1, 'Notes', 'TEXT', 4),
			('00000000-0000-0000-0000-0000000000a5', $1, 'Review', 'DATE', 5);
		INSERT INTO custom_field_options (id, field_id, label, sort_order)
		SELECT ('00000000-0000-0000-0000-0000000000b' || g)::uuid, '00000000-0000-0000-0000-0000000000a1', 'Option ' || g, g
		FROM generate_series(1, 4) AS g;
		INSERT INTO custom_field_values (issue_id, field_id, option_id, bool_value, number_value, text_value, date_value)
		SELECT i.id, f.id,
			CASE f.type WHEN 'DROPDOWN' THEN ('00000000-0000-0000-0000-0000000000b' || (1 + i.number % 4))::uuid END,
			CASE f.type WHEN 'CHECKBOX' THEN i.number % 3 = 0 END,
			CASE f.type WHEN 'NUMBER' THEN i.number % 50 END,
			CASE f.type WHEN 'TEXT' THEN 'Note ' || md5(i.number::text) END,
			CASE f.type WHEN 'DATE' THEN date '2026-01-01' + i.number % 200 END
		FROM issues AS i CROSS JOIN custom_fields AS f WHERE i.project_id = $1;`, "$1", "'"+p.ID.String()+"'"))
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, "VACUUM ANALYZE issues, custom_fields, custom_field_options, custom_field_values, issue_filter_terms")
	require.NoError(t, err)

	explain := func(f Filter, conds []customfield.Condition, offset int) planNode {
		t.Helper()
		query, _, args, _, _ := listStatement(p, f, conds, time.Now().UTC(), offset, 50, false)
		var raw []byte
		require.NoError(t, db.Pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+query, args...).Scan(&raw))
		var plans []struct{ Plan planNode }
		require.NoError(t, json.Unmarshal(raw, &plans))
		return plans[0].Plan
	}
	requirePlan := func(name string, plan planNode, want map[string]string) {
		t.Helper()
		got := map[string]string{}
		var all []string
		plan.walk(func(n planNode) {
			all = append(all, n.Type+" "+n.Relation+" "+n.Index)
			if n.Type == "Seq Scan" && slices.Contains([]string{"issues", "custom_field_values", "issue_filter_terms"}, n.Relation) {
				t.Errorf("%s: sequential scan of %s", name, n.Relation)
			}
			if n.Index != "" {
				got[n.Index] = n.Type
			}
		})
		for index, typ := range want {
			require.Contains(t, got, index, "%s: %s not used; plan:\n%s", name, index, strings.Join(all, "\n"))
			if typ != "" {
				require.Equal(t, typ, got[index], "%s: plan:\n%s", name, strings.Join(all, "\n"))
			}
		}
	}

	// A deep page finds its keys in the order's index alone, then joins 50 rows.
	requirePlan("last page", explain(Filter{}, nil, 9950), map[string]string{"issues_project_number_key": "Index Only Scan"})
	requirePlan("last page by update", explain(Filter{Sort: SortUpdated}, nil, 9950),
		map[string]string{"issues_project_updated": "Index Only Scan"})

	// A cursor's page is a range of the order's index after the cursor's row: an index
	// scan that starts there and stops after a page, no sort and nothing skipped.
	atCursor := func(f Filter, k ListKey) planNode {
		f.After = &k
		return explain(f, nil, 0)
	}
	last := ListKey{Number: 9950, Updated: time.Now().Add(-9950 * time.Second)}
	for name, plan := range map[string]planNode{
		"cursor page":           atCursor(Filter{}, last),
		"cursor page by update": atCursor(Filter{Sort: SortUpdated}, last),
	} {
		index := "issues_project_number_key"
		if strings.Contains(name, "update") {
			index = "issues_project_updated"
		}
		requirePlan(name, plan, map[string]string{index: ""})
		// The only sort is the page's own rows, at the top: the keys come in index order.
		sorts := 0
		plan.walk(func(n planNode) {
			if n.Type == "Sort" {
				sorts++
			}
		})
		require.Equal(t, 1, sorts, name)
		require.Equal(t, "Sort", plan.Type, name)
	}

	// Each type's cf filter reads its index (migration 0028); together they combine.
	text := customfield.Condition{FieldID: field(4), Type: customfield.TypeText, Text: "abc"}
	number := customfield.Condition{FieldID: field(3), Type: customfield.TypeNumber, Number: "7"}
	date := customfield.Condition{FieldID: field(5), Type: customfield.TypeDate, Date: time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC)}
	dropdown := customfield.Condition{FieldID: field(1), Type: customfield.TypeDropdown, Option: option}
	checked := customfield.Condition{FieldID: field(2), Type: customfield.TypeCheckbox, Bool: true}
	// Equalities alone in key order read the narrow copy's GIN index (migration 0029);
	// in update order, or with another filter, the issue rows' (0028).
	unticked := customfield.Condition{FieldID: field(2), Type: customfield.TypeCheckbox}
	for name, c := range map[string]struct {
		conds         []customfield.Condition
		index, byRows string
	}{
		"TEXT":     {[]customfield.Condition{text}, "custom_field_values_text", "custom_field_values_text"},
		"NUMBER":   {[]customfield.Condition{number}, "issue_filter_terms_terms", "issues_custom_terms"},
		"DATE":     {[]customfield.Condition{date}, "issue_filter_terms_terms", "issues_custom_terms"},
		"DROPDOWN": {[]customfield.Condition{dropdown}, "issue_filter_terms_terms", "issues_custom_terms"},
		"CHECKBOX": {[]customfield.Condition{checked}, "issue_filter_terms_terms", "issues_custom_terms"},
		// The three equalities are one scan of the GIN index, which intersects them.
		"three at once": {[]customfield.Condition{dropdown, checked, number}, "issue_filter_terms_terms", "issues_custom_terms"},
		// An unticked box is the absence of a term: the issue rows answer it.
		"equality and unticked": {[]customfield.Condition{dropdown, unticked}, "issues_custom_terms", "issues_custom_terms"},
	} {
		for _, offset := range []int{0, 100} {
			requirePlan(name, explain(Filter{}, c.conds, offset), map[string]string{c.index: ""})
			requirePlan(name+" by update", explain(Filter{Sort: SortUpdated}, c.conds, offset), map[string]string{c.byRows: ""})
			requirePlan(name+" and a type", explain(Filter{Type: TypeTask}, c.conds, offset), map[string]string{c.byRows: ""})
		}
	}
}

// TestListPageRowsByIndexProbe: over a table of some thousand narrow issues, where
// reading every issue and hashing it looks cheaper to the planner than fifty index
// probes, the page's rows are still found by one probe per key (the LATERAL
// sub-select), unfiltered and filtered, never by a sequential scan of issues (a filter
// may read the project's issues to find and count its matches); nor are thousands of
// users, statuses and sprints read whole to name fifty rows' own.
func TestListPageRowsByIndexProbe(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	p := Project{ID: uuid.New(), Key: "NARROW"}
	_, err := db.Pool.Exec(ctx, strings.ReplaceAll(`
		INSERT INTO users (id, email, display_name) VALUES ('00000000-0000-0000-0000-000000000001', 'n@example.com', 'N');
		INSERT INTO projects (id, key, name, owner_id) VALUES ($1, 'NARROW', 'N', '00000000-0000-0000-0000-000000000001');
		INSERT INTO workflows (id, name, project_id) VALUES ('00000000-0000-0000-0000-000000000003', 'W', $1);
		INSERT INTO workflow_statuses (id, workflow_id, name, category) VALUES
			('00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-000000000003', 'To Do', 'TODO');
		INSERT INTO issues (project_id, number, key, title, status_id, reporter_id, priority)
		SELECT $1, g, 'NARROW-' || g, 'I', '00000000-0000-0000-0000-000000000004', '00000000-0000-0000-0000-000000000001',
			CASE WHEN g % 2 = 0 THEN 'HIGH' ELSE 'LOW' END
		FROM generate_series(1, 13000) AS g;
		-- A busy instance: thousands of users, statuses and sprints of other projects.
		INSERT INTO users (email, display_name) SELECT 'u' || g || '@example.com', 'U' || g FROM generate_series(1, 5000) AS g;
		INSERT INTO workflows (id, name, project_id) VALUES ('00000000-0000-0000-0000-000000000005', 'Other', $1);
		INSERT INTO workflow_statuses (workflow_id, name, category)
		SELECT '00000000-0000-0000-0000-000000000005', 'S' || g, 'TODO' FROM generate_series(1, 3000) AS g;
		INSERT INTO sprints (project_id, name) SELECT $1, 'Sprint ' || g FROM generate_series(1, 3000) AS g;
		UPDATE issues SET assignee_id = (SELECT id FROM users WHERE email = 'u' || (number % 5000 + 1) || '@example.com'),
			sprint_id = (SELECT id FROM sprints WHERE name = 'Sprint ' || (number % 3000 + 1))
		WHERE number % 3 = 0;`, "$1", "'"+p.ID.String()+"'"))
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, "VACUUM ANALYZE issues, users, workflow_statuses, sprints")
	require.NoError(t, err)
	for name, f := range map[string]Filter{"plain": {}, "by update": {Sort: SortUpdated}, "filtered": {Priority: "HIGH"}} {
		query, _, args, _, _ := listStatement(p, f, nil, time.Now().UTC(), 0, 50, false)
		var raw []byte
		require.NoError(t, db.Pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+query, args...).Scan(&raw))
		var plans []struct{ Plan planNode }
		require.NoError(t, json.Unmarshal(raw, &plans))
		// A filter without an index of its own may find its matches by reading the
		// project's issues (under the Aggregate that gathers them): the total counts
		// them all. Nothing else may read a table whole.
		var check func(n planNode, matches bool)
		check = func(n planNode, matches bool) {
			matches = matches || n.Type == "Aggregate"
			if n.Type == "Seq Scan" && slices.Contains([]string{"issues", "users", "workflow_statuses", "sprints"}, n.Relation) &&
				!(matches && n.Relation == "issues") {
				t.Errorf("%s: a sequential scan of %s for a 50-row page", name, n.Relation)
			}
			for _, c := range n.Plans {
				check(c, matches)
			}
		}
		check(plans[0].Plan, false)
	}
}
