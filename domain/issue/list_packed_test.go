package issue_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
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
	exec := func(q string, args ...any) { t.Helper(); b.exec(t, q, args...) }
	labels := []string{"12:ab", "é-ü 世界", "a;b", "O-", "T5:x"}
	labelIDs := make([]uuid.UUID, len(labels))
	for i, name := range labels {
		labelIDs[i] = uuid.New()
		exec("INSERT INTO labels (id, project_id, name, color) VALUES ($1, $2, $3, '#A0b1C2')", labelIDs[i], b.project.ID, name)
	}
	field := func(name, typ string, order int) uuid.UUID { t.Helper(); return b.field(t, name, typ, order) }
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
	// In key order, numbers 1 to n without a gap are read as a range from the page's
	// first number; with gaps, by skipping index entries. Both must give the same pages.
	check := func(stage string, n int) {
		t.Helper()
		for _, sort := range []struct{ name, order string }{
			{issue.SortCreated, "number"}, {issue.SortUpdated, "updated_at DESC, number DESC"},
		} {
			want := b.numbers(t, "true", sort.order)
			require.Len(t, want, n, stage)
			b.requirePages(t, svc, issue.Filter{Sort: sort.name}, want, []int{5, 7, 23, 50}, stage+": "+sort.name)
		}
	}
	check("numbers without a gap", n)
	_, err = b.db.Pool.Exec(b.ctx, "DELETE FROM issues WHERE project_id = $1 AND number IN (3, 10, 11)", b.project.ID)
	require.NoError(t, err)
	check("numbers 3, 10 and 11 deleted", n-3)
	_, err = b.db.Pool.Exec(b.ctx, "DELETE FROM issues WHERE project_id = $1 AND number < 12", b.project.ID)
	require.NoError(t, err)
	check("numbers 1 to 11 deleted", n-11)
}

// TestFilteredListPages proves every page of a filtered list (a cf filter alone, with
// another filter, in both orders) holds exactly its rows of the whole ordered list of
// matches, with the matches' count as the total, and that a page past the end is
// empty but still carries the total: the page is a slice of the array of the matches'
// numbers.
func TestFilteredListPages(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.PackageDB(t))
	svc := issue.NewService(b.db, bus(t, b.db, nil))
	const n = 23
	_, err := b.db.Pool.Exec(b.ctx, `INSERT INTO issues (project_id, number, key, title, status_id, reporter_id, priority, updated_at)
		SELECT $1, g, $2 || '-' || g, 'I', $3, $4, CASE WHEN g % 2 = 0 THEN 'HIGH' ELSE 'LOW' END,
			timestamptz '2026-01-01' + make_interval(mins => (g * 7) % 12)
		FROM generate_series(1, $5::int) AS g`, b.project.ID, b.project.Key, b.todo, b.owner.UserID, n)
	require.NoError(t, err)
	blocked := b.field(t, "Blocked", "CHECKBOX", 1)
	b.exec(t, `INSERT INTO custom_field_values (issue_id, field_id, bool_value)
		SELECT id, $2, number % 3 <> 0 FROM issues WHERE project_id = $1`, b.project.ID, blocked)
	ticked := []customfield.Filter{{FieldID: blocked, Value: "true"}}
	for _, c := range []struct {
		name, where string
		filter      issue.Filter
	}{
		{"ticked", "number % 3 <> 0", issue.Filter{CustomFields: ticked}},
		{"unticked", "number % 3 = 0", issue.Filter{CustomFields: []customfield.Filter{{FieldID: blocked, Value: "false"}}}},
		{"ticked and HIGH", "number % 3 <> 0 AND number % 2 = 0", issue.Filter{CustomFields: ticked, Priority: "HIGH"}},
		{"HIGH", "number % 2 = 0", issue.Filter{Priority: "HIGH"}},
	} {
		for _, sort := range []struct{ name, order string }{
			{issue.SortCreated, "number"}, {issue.SortUpdated, "updated_at DESC, number DESC"},
		} {
			want := b.numbers(t, c.where, sort.order)
			require.NotEmpty(t, want)
			f := c.filter
			f.Sort = sort.name
			b.requirePages(t, svc, f, want, []int{4, 7, 50}, c.name+", "+sort.name)
			// An offset no array subscript holds is past the end too.
			views, total, err := svc.List(b.ctx, b.project, f, math.MaxInt32*4, 50)
			require.NoError(t, err)
			require.Empty(t, views)
			require.Equal(t, len(want), total)
		}
	}
}

// TestListCopiesFollowValueChanges proves the copies of an issue's custom field values
// (custom_packed for the list, custom_terms and issue_filter_terms for the cf filter;
// kept by the triggers of migrations 0027 to 0029) follow every way a value changes: set,
// updated, deleted, an option renamed (labels come with the definitions), an option
// or a whole field deleted by cascade.
// After each change the list reads what Get reads and each filter finds exactly the
// issues holding the value, numbers compared as numbers (7.50 is 7.5).
func TestListCopiesFollowValueChanges(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.PackageDB(t))
	svc := issue.NewService(b.db, bus(t, b.db, nil))
	exec := func(q string, args ...any) { t.Helper(); b.exec(t, q, args...) }
	field := func(name, typ string, order int) uuid.UUID { t.Helper(); return b.field(t, name, typ, order) }
	number, drop, check, due := field("Est", "NUMBER", 1), field("Sev", "DROPDOWN", 2), field("Blocked", "CHECKBOX", 3),
		field("Due", "DATE", 4)
	optA, optB := uuid.New(), uuid.New()
	exec("INSERT INTO custom_field_options (id, field_id, label) VALUES ($1, $3, 'A'), ($2, $3, 'B')", optA, optB, drop)
	var ids [3]uuid.UUID
	for i := range ids {
		v, err := svc.Create(b.ctx, b.project, b.owner, issue.NewIssue{Title: "I", Type: issue.TypeTask, Priority: issue.PriorityLow})
		require.NoError(t, err)
		ids[i] = v.ID
	}
	// One statement writes several issues' values, as a bulk change would.
	exec(`INSERT INTO custom_field_values (issue_id, field_id, number_value, option_id, bool_value, date_value)
		VALUES ($1, $3, 7.50, NULL, NULL, NULL), ($1, $4, NULL, $6, NULL, NULL), ($1, $5, NULL, NULL, true, NULL),
			($2, $3, 7, NULL, NULL, NULL), ($2, $4, NULL, $7, NULL, NULL), ($2, $5, NULL, NULL, false, NULL),
			($2, $8, NULL, NULL, NULL, '2026-03-01')`,
		ids[0], ids[1], number, drop, check, optA, optB, due)

	// found lists the issues matching one cf filter, by index in ids. In key order the
	// narrow copy answers (issue_filter_terms, migration 0029), in update order the
	// issue rows' terms: both must find the same issues.
	found := func(f uuid.UUID, value string) []int {
		t.Helper()
		var both [2][]int
		for i, sort := range []string{"", issue.SortUpdated} {
			filter := issue.Filter{CustomFields: []customfield.Filter{{FieldID: f, Value: value}}, Sort: sort}
			views, total, err := svc.List(b.ctx, b.project, filter, 0, 50)
			require.NoError(t, err)
			require.Len(t, views, total)
			both[i] = []int{}
			for _, v := range views {
				both[i] = append(both[i], slices.Index(ids[:], v.ID))
			}
		}
		slices.Sort(both[1])
		require.Equal(t, both[0], both[1], "the narrow copy and the issue rows find the same issues")
		return both[0]
	}
	// sameAsGet: the list's values are Get's, and labels come out of the definitions,
	// whether the list statement reads them or the access statement did (FieldTypesRead).
	sameAsGet := func(stage string) map[uuid.UUID][]customfield.FieldValue {
		t.Helper()
		views, _, err := svc.List(b.ctx, b.project, issue.Filter{}, 0, 50)
		require.NoError(t, err)
		read := issue.NewFieldTypesRead()
		_, _, err = project.LoadWithUser(b.ctx, b.db.Pool, b.project.Key, b.owner.UserID, &read.Extra)
		require.NoError(t, err)
		viaAccess, _, err := svc.List(b.ctx, b.project, issue.Filter{FieldTypes: read}, 0, 50)
		require.NoError(t, err)
		require.Equal(t, views, viaAccess, "%s: definitions read by the access statement", stage)
		out := map[uuid.UUID][]customfield.FieldValue{}
		for _, v := range views {
			got, err := svc.Get(b.ctx, b.project, issue.Ref{ID: v.ID})
			require.NoError(t, err)
			require.Equal(t, len(got.CustomFields), len(v.CustomFields), stage)
			for j := range got.CustomFields {
				require.Equal(t, got.CustomFields[j].Value, v.CustomFields[j].Value, "%s: field %d", stage, j)
			}
			out[v.ID] = v.CustomFields
		}
		return out
	}

	vals := sameAsGet("set")
	require.Equal(t, "A", *vals[ids[0]][1].OptionLabel)
	require.Equal(t, []int{0}, found(number, "7.5"))
	require.Equal(t, []int{0}, found(number, "7.500"))
	require.Equal(t, []int{1}, found(number, "7"))
	require.Equal(t, []int{0}, found(drop, optA.String()))
	require.Equal(t, []int{0}, found(check, "true"))
	require.Equal(t, []int{1, 2}, found(check, "false"))
	require.Equal(t, []int{1}, found(due, "2026-03-01"))
	require.Equal(t, []int{}, found(due, "2026-03-02"))

	exec("UPDATE custom_field_options SET label = 'Alpha' WHERE id = $1", optA)
	exec("UPDATE custom_field_values SET number_value = 8 WHERE issue_id = $1 AND field_id = $2", ids[0], number)
	vals = sameAsGet("option renamed, number updated")
	require.Equal(t, "Alpha", *vals[ids[0]][1].OptionLabel)
	require.Equal(t, []int{}, found(number, "7.5"))
	require.Equal(t, []int{0}, found(number, "8"))

	exec("DELETE FROM custom_field_options WHERE id = $1", optA)
	exec("DELETE FROM custom_field_values WHERE issue_id = $1 AND field_id = $2", ids[1], due)
	vals = sameAsGet("option deleted, date cleared")
	require.False(t, vals[ids[0]][1].Set)
	require.Equal(t, []int{1}, found(drop, optB.String()))
	require.Equal(t, []int{}, found(due, "2026-03-01"))

	exec("DELETE FROM custom_fields WHERE id = $1", check)
	sameAsGet("field deleted")
	var left int
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, `SELECT count(*) FROM issues
		WHERE project_id = $1 AND (array_to_string(custom_terms, ' ') LIKE '%' || $2 || '%' OR custom_packed LIKE '%' || $2 || '%')`, b.project.ID, check.String()).Scan(&left))
	require.Zero(t, left, "no issue row keeps a copy of the deleted field's values")
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, `SELECT count(*) FROM issue_filter_terms AS t, unnest(t.terms) AS term
		WHERE t.project_id = $1 AND substr(term, 1, 16) = uuid_send($2)`, b.project.ID, check).Scan(&left))
	require.Zero(t, left, "nor does the narrow copy")

	exec("DELETE FROM custom_field_values WHERE issue_id = $1", ids[1])
	var packed *string
	var terms []string
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, "SELECT custom_packed, custom_terms FROM issues WHERE id = $1", ids[1]).Scan(&packed, &terms))
	require.Nil(t, packed, "an issue without values has no copy")
	require.Nil(t, terms)
	var narrow int
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, "SELECT count(*) FROM issue_filter_terms WHERE issue_id = $1", ids[1]).Scan(&narrow))
	require.Zero(t, narrow, "nor a row of the narrow copy")
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, "SELECT count(*) FROM issue_filter_terms WHERE issue_id = $1", ids[0]).Scan(&narrow))
	require.Equal(t, 1, narrow, "an issue with values keeps its row")
}

// TestCustomCopyWaitsForConcurrentWriter: a field deleted while another transaction sets
// another field of one of its issues (holding the issue's lock, as every API write of
// values does). The deletion's trigger waits for that lock, then must build the issue's
// copy from what the writer committed, not from the snapshot it took before waiting.
func TestCustomCopyWaitsForConcurrentWriter(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.PackageDB(t))
	svc := issue.NewService(b.db, bus(t, b.db, nil))
	ctx := b.ctx
	gone, kept := uuid.New(), uuid.New()
	_, err := b.db.Pool.Exec(ctx, `INSERT INTO custom_fields (id, project_id, name, type, sort_order)
		VALUES ($1, $3, 'Gone', 'NUMBER', 1), ($2, $3, 'Kept', 'NUMBER', 2)`, gone, kept, b.project.ID)
	require.NoError(t, err)
	v, err := svc.Create(ctx, b.project, b.owner, issue.NewIssue{Title: "I", Type: issue.TypeTask, Priority: issue.PriorityLow})
	require.NoError(t, err)
	_, err = b.db.Pool.Exec(ctx, "INSERT INTO custom_field_values (issue_id, field_id, number_value) VALUES ($1, $2, 1)", v.ID, gone)
	require.NoError(t, err)

	writer, err := b.db.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = writer.Rollback(ctx) }()
	_, err = writer.Exec(ctx, "SELECT 1 FROM issues WHERE id = $1 FOR UPDATE", v.ID)
	require.NoError(t, err)
	_, err = writer.Exec(ctx, "INSERT INTO custom_field_values (issue_id, field_id, number_value) VALUES ($1, $2, 2)", v.ID, kept)
	require.NoError(t, err)

	deleted := make(chan error, 1)
	var deleterPID int
	conn, err := b.db.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	require.NoError(t, conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&deleterPID))
	go func() {
		_, err := conn.Exec(ctx, "DELETE FROM custom_fields WHERE id = $1", gone)
		deleted <- err
	}()
	// The deletion's trigger is waiting for the writer's lock on the issue.
	require.Eventually(t, func() bool {
		var waiting bool
		err := b.db.Pool.QueryRow(ctx, "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $1", deleterPID).Scan(&waiting)
		return err == nil && waiting
	}, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, writer.Commit(ctx))
	require.NoError(t, <-deleted)

	var terms []string
	var packed *string
	require.NoError(t, b.db.Pool.QueryRow(ctx, "SELECT custom_terms, custom_packed FROM issues WHERE id = $1", v.ID).Scan(&terms, &packed))
	require.Equal(t, []string{kept.String() + "=2"}, terms)
	require.NotNil(t, packed)
	require.Equal(t, kept.String()+"N2;", *packed)
	var narrow [][]byte
	require.NoError(t, b.db.Pool.QueryRow(ctx, "SELECT terms FROM issue_filter_terms WHERE issue_id = $1", v.ID).Scan(&narrow))
	require.Equal(t, [][]byte{append(kept[:], '2')}, narrow, "the narrow copy too")
}

// numbers are the numbers of the project's issues matching where, in order.
func (b *bundle) numbers(t *testing.T, where, order string) []int {
	t.Helper()
	rows, err := b.db.Pool.Query(b.ctx, "SELECT number FROM issues WHERE project_id = $1 AND "+where+" ORDER BY "+order, b.project.ID)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	return out
}

// requirePages reads every page of f at each size, one past the end included: each
// carries the total, holds its share of want, and together they are want in order.
func (b *bundle) requirePages(t *testing.T, svc *issue.Service, f issue.Filter, want []int, sizes []int, label string) {
	t.Helper()
	for _, size := range sizes {
		var got []int
		for offset := 0; offset <= len(want)+size; offset += size {
			views, total, err := svc.List(b.ctx, b.project, f, offset, size)
			require.NoError(t, err)
			require.Equal(t, len(want), total, "%s: size %d offset %d", label, size, offset)
			require.Len(t, views, max(0, min(size, len(want)-offset)), "%s: size %d offset %d", label, size, offset)
			for _, v := range views {
				got = append(got, v.Number)
			}
		}
		require.Equal(t, want, got, "%s: size %d", label, size)
	}
}

// exec runs one statement on the bundle's database.
func (b *bundle) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	_, err := b.db.Pool.Exec(b.ctx, q, args...)
	require.NoError(t, err)
}

// field adds a custom field to the bundle's project and returns its id.
func (b *bundle) field(t *testing.T, name, typ string, order int) uuid.UUID {
	t.Helper()
	id := uuid.New()
	b.exec(t, "INSERT INTO custom_fields (id, project_id, name, type, sort_order) VALUES ($1, $2, $3, $4, $5)",
		id, b.project.ID, name, typ, order)
	return id
}

// TestFieldTypesReadResolvesAsTheQuery: the cf filters resolved against the fields an
// access statement read (FieldTypesRead, the list's packed field definitions) give
// the conditions and errors Resolve's own query gives, for names a naive packing
// would split (a colon, digits, multibyte letters), and a field of another project is
// ignored either way.
func TestFieldTypesReadResolvesAsTheQuery(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.PackageDB(t))
	number, check, drop := uuid.New(), uuid.New(), uuid.New()
	b.exec(t, `INSERT INTO custom_fields (id, project_id, name, type, sort_order) VALUES
		($1, $4, '12:Größe', 'NUMBER', 1), ($2, $4, 'Blocked:', 'CHECKBOX', 2), ($3, $4, 'É', 'DROPDOWN', 3)`,
		number, check, drop, b.project.ID)
	read := issue.NewFieldTypesRead()
	_, _, err := project.LoadWithUser(b.ctx, b.db.Pool, b.project.Key, b.owner.UserID, &read.Extra)
	require.NoError(t, err)
	require.True(t, read.Extra.Scanned)

	option := uuid.New()
	for name, c := range map[string]struct {
		filters []customfield.Filter
		invalid string // the field an InvalidError names, if any
	}{
		"valid":         {filters: []customfield.Filter{{FieldID: number, Value: "7.50"}, {FieldID: check, Value: "true"}, {FieldID: drop, Value: option.String()}}},
		"unknown field": {filters: []customfield.Filter{{FieldID: uuid.New(), Value: "x"}, {FieldID: number, Value: "1"}}},
		"bad number":    {filters: []customfield.Filter{{FieldID: number, Value: "seven"}}, invalid: "12:Größe"},
		"bad option":    {filters: []customfield.Filter{{FieldID: drop, Value: "High"}}, invalid: "É"},
	} {
		want, wantErr := customfield.Resolve(b.ctx, b.db.Bun, b.project.ID, c.filters)
		got, gotErr := issue.ResolveFieldTypes(read, c.filters)
		require.Equal(t, want, got, name)
		if c.invalid == "" {
			require.NoError(t, gotErr, name)
			require.NotEmpty(t, got, name)
			continue
		}
		var wantInvalid, gotInvalid *customfield.InvalidError
		require.ErrorAs(t, wantErr, &wantInvalid, name)
		require.ErrorAs(t, gotErr, &gotInvalid, name)
		require.Equal(t, c.invalid, gotInvalid.FieldName, name)
		require.Equal(t, *wantInvalid, *gotInvalid, name)
	}
}

// TestValueWriteLocksFieldsBeforeIssue: a write of an issue's values waits for its
// fields before it locks the issue. A field's deletion holds the field's row and then,
// through the cascade to the values and their trigger, locks the issues holding them;
// a writer that held the issue while waiting for the field would deadlock with it.
// Here a transaction holds the field's row as a deletion would: the writer waits with
// the issue still free (NOWAIT takes it), then finds the field gone and saves.
func TestValueWriteLocksFieldsBeforeIssue(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.NewDB(t))
	svc := issue.NewService(b.db, bus(t, b.db, nil))
	ctx := b.ctx
	f := b.field(t, "Points", "NUMBER", 1)
	v, err := svc.Create(ctx, b.project, b.owner, issue.NewIssue{Title: "I", Type: issue.TypeTask, Priority: issue.PriorityLow})
	require.NoError(t, err)

	deleter, err := b.db.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = deleter.Rollback(ctx) }()
	_, err = deleter.Exec(ctx, "SELECT 1 FROM custom_fields WHERE id = $1 FOR UPDATE", f)
	require.NoError(t, err)

	five := "5"
	done := make(chan error, 1)
	go func() {
		_, err := svc.Update(ctx, b.project, b.owner, issue.Ref{ID: v.ID},
			issue.Patch{CustomFieldValues: []customfield.Input{{FieldID: f, Value: &five}}})
		done <- err
	}()
	require.Eventually(t, func() bool {
		var waiting int
		err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE '%FROM custom_fields%FOR KEY SHARE%'`).Scan(&waiting)
		return err == nil && waiting == 1
	}, 5*time.Second, 5*time.Millisecond, "the writer waits for the field")
	_, err = deleter.Exec(ctx, "SELECT 1 FROM issues WHERE id = $1 FOR UPDATE NOWAIT", v.ID)
	require.NoError(t, err, "the writer holds no lock on the issue while it waits")
	_, err = deleter.Exec(ctx, "DELETE FROM custom_fields WHERE id = $1", f)
	require.NoError(t, err)
	require.NoError(t, deleter.Commit(ctx))

	// The field is gone: its value is dropped as any deleted field's is (customfield.Plan),
	// and the save succeeds, neither deadlocked nor failed.
	require.NoError(t, <-done)
	var values int
	require.NoError(t, b.db.Pool.QueryRow(ctx, "SELECT count(*) FROM custom_field_values WHERE issue_id = $1", v.ID).Scan(&values))
	require.Zero(t, values)
}
