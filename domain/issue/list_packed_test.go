package issue_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestListLabelsAndValuesMatchGet proves the list's packed labels and custom field
// values (one text column each, parsed by hand) read exactly what Get reads: labels
// whose names hold the packing's own separators and multi-byte runes, a value of every
// type (texts with colons, semicolons, digits and emoji, an empty-looking number, dates
// before and after 2000, both booleans, an option), unset fields and issues with none.
func TestListLabelsAndValuesMatchGet(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.PackageDB(t))
	svc := issue.NewService(b.db, bus(t, b.db, nil))
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := b.db.Pool.Exec(b.ctx, q, args...)
		require.NoError(t, err)
	}
	labels := []string{"12:ab", "é-ü 世界", "a;b", "O-", "T5:x"}
	labelIDs := make([]uuid.UUID, len(labels))
	for i, name := range labels {
		labelIDs[i] = uuid.New()
		exec("INSERT INTO labels (id, project_id, name, color) VALUES ($1, $2, $3, '#A0b1C2')", labelIDs[i], b.project.ID, name)
	}
	field := func(name, typ string, order int) uuid.UUID {
		id := uuid.New()
		exec("INSERT INTO custom_fields (id, project_id, name, type, sort_order) VALUES ($1, $2, $3, $4, $5)", id, b.project.ID, name, typ, order)
		return id
	}
	text, number, date, check, drop := field("Notes", "TEXT", 1), field("Est", "NUMBER", 2), field("Due", "DATE", 3),
		field("Blocked", "CHECKBOX", 4), field("Sev", "DROPDOWN", 5)
	field("Never set", "TEXT", 6)
	option := uuid.New()
	exec("INSERT INTO custom_field_options (id, field_id, label) VALUES ($1, $2, '3:High;O-B1')", option, drop)

	texts := []string{"plain", "7:seven;", "multi\nline 🎉 ü", strings.Repeat("x:", 500), "D12;B1N3;"}
	numbers := []string{"0", "-1234567890.01", "7.5", "1e-9", "42"}
	dates := []string{"0001-01-01", "1999-12-31", "2000-01-01", "2026-02-28", "9999-12-31"}
	for i := range texts {
		v, err := svc.Create(b.ctx, b.project, b.owner, issue.NewIssue{Title: "I", Type: issue.TypeTask, Priority: issue.PriorityLow})
		require.NoError(t, err)
		for _, l := range labelIDs[:i%len(labelIDs)+1] {
			exec("INSERT INTO issue_labels (issue_id, label_id) VALUES ($1, $2)", v.ID, l)
		}
		exec(`INSERT INTO custom_field_values (issue_id, field_id, text_value) VALUES ($1, $2, $3)`, v.ID, text, texts[i])
		exec(`INSERT INTO custom_field_values (issue_id, field_id, number_value) VALUES ($1, $2, $3::numeric)`, v.ID, number, numbers[i])
		exec(`INSERT INTO custom_field_values (issue_id, field_id, date_value) VALUES ($1, $2, $3::date)`, v.ID, date, dates[i])
		exec(`INSERT INTO custom_field_values (issue_id, field_id, bool_value) VALUES ($1, $2, $3)`, v.ID, check, i%2 == 0)
		if i%2 == 1 {
			exec(`INSERT INTO custom_field_values (issue_id, field_id, option_id) VALUES ($1, $2, $3)`, v.ID, drop, option)
		}
	}
	_, err := svc.Create(b.ctx, b.project, b.owner, issue.NewIssue{Title: "Bare", Type: issue.TypeTask, Priority: issue.PriorityLow})
	require.NoError(t, err)

	views, total, err := svc.List(b.ctx, b.project, issue.Filter{}, 0, 50)
	require.NoError(t, err)
	require.Equal(t, len(texts)+1, total)
	require.Len(t, views, len(texts)+1)
	for i, v := range views {
		got, err := svc.Get(b.ctx, b.project, issue.Ref{ID: v.ID})
		require.NoError(t, err)
		require.Equal(t, got.Labels, v.Labels, "issue %d", i)
		require.Len(t, v.CustomFields, 6)
		require.Equal(t, len(got.CustomFields), len(v.CustomFields))
		for j := range got.CustomFields {
			gf, lf := got.CustomFields[j].Field, v.CustomFields[j].Field // the list reads these four
			require.Equal(t, []any{gf.ID, gf.Name, gf.Type, gf.Required}, []any{lf.ID, lf.Name, lf.Type, lf.Required})
			require.Equal(t, got.CustomFields[j].Value, v.CustomFields[j].Value, "issue %d field %d", i, j)
		}
		if i < len(texts) {
			require.Len(t, v.Labels, i%len(labelIDs)+1)
			require.Equal(t, texts[i], *v.CustomFields[0].Text)
			require.Equal(t, dates[i], v.CustomFields[2].Date.Format("2006-01-02"))
			require.Equal(t, i%2 == 0, *v.CustomFields[3].Bool)
			require.Equal(t, i%2 == 1, v.CustomFields[4].Set)
		} else {
			require.Empty(t, v.Labels)
			for _, cf := range v.CustomFields {
				require.False(t, cf.Set)
			}
		}
	}
}

// TestListPagesFromBothEnds proves every page of the unfiltered list, in both orders,
// holds exactly its rows of the whole ordered list, whether it is read from the start of
// the order's index (first half) or from its end (second half), with a partial last
// page, and that a page past the end is empty but carries the total.
func TestListPagesFromBothEnds(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.PackageDB(t))
	svc := issue.NewService(b.db, bus(t, b.db, nil))
	const n = 23
	// Updated times collide in pairs, so the number breaks the tie of the update order.
	_, err := b.db.Pool.Exec(b.ctx, `INSERT INTO issues (project_id, number, key, title, status_id, reporter_id, updated_at)
		SELECT $1, g, $2 || '-' || g, 'I', $3, $4, timestamptz '2026-01-01' + make_interval(mins => (g * 7) % 12)
		FROM generate_series(1, $5::int) AS g`, b.project.ID, b.project.Key, b.todo, b.owner.UserID, n)
	require.NoError(t, err)
	for _, sort := range []struct{ name, order string }{
		{issue.SortCreated, "number"}, {issue.SortUpdated, "updated_at DESC, number DESC"},
	} {
		var want []int
		rows, err := b.db.Pool.Query(b.ctx, "SELECT number FROM issues WHERE project_id = $1 ORDER BY "+sort.order, b.project.ID)
		require.NoError(t, err)
		for rows.Next() {
			var x int
			require.NoError(t, rows.Scan(&x))
			want = append(want, x)
		}
		require.NoError(t, rows.Err())
		require.Len(t, want, n)
		for _, size := range []int{5, 7, 23, 50} {
			var got []int
			for offset := 0; offset <= n+size; offset += size {
				views, total, err := svc.List(b.ctx, b.project, issue.Filter{Sort: sort.name}, offset, size)
				require.NoError(t, err)
				require.Equal(t, n, total, "%s size %d offset %d", sort.name, size, offset)
				require.Len(t, views, max(0, min(size, n-offset)), "%s size %d offset %d", sort.name, size, offset)
				for _, v := range views {
					got = append(got, v.Number)
				}
			}
			require.Equal(t, want, got, "%s size %d", sort.name, size)
		}
	}
}
