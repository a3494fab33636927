package issue_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestTermBitmapsFollowEveryWrite proves the term bitmaps (issue_term_blocks, migration
// 0058), which answer a list of cf equalities alone in key order, equal the plain
// query over the values after every kind of write: creates of many issues in one
// statement (an import) and one by one, single value writes, bulk updates, value
// deletions, issue deletions (gaps in the numbers), an option's and a field's deletion
// (cascades) and a rolled-back transaction. After each step, for filters of one to
// three terms (one that matches nothing, one naming a term twice), the total and every
// page (sizes 50 and 7, one past the end) are the plain query's, and the table holds
// exactly the bits the narrow copy's rows give, no block left empty.
func TestTermBitmapsFollowEveryWrite(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.PackageDB(t))
	svc := issue.NewService(b.db, bus(t, b.db, nil))
	rng := rand.New(rand.NewPCG(58, 1024))
	exec := func(q string, args ...any) { t.Helper(); b.exec(t, q, args...) }
	drop, num, chk, due := b.field(t, "Sev", "DROPDOWN", 1), b.field(t, "Est", "NUMBER", 2),
		b.field(t, "Blocked", "CHECKBOX", 3), b.field(t, "Due", "DATE", 4)
	opts := [3]uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	for i, o := range opts {
		exec("INSERT INTO custom_field_options (id, field_id, label) VALUES ($1, $2, $3)", o, drop, fmt.Sprint("O", i))
	}
	chkDeleted := false

	type cond struct {
		field      uuid.UUID
		value, sql string // the filter's value and the plain predicate on a value v
	}
	optCond := func(i int) cond {
		return cond{drop, opts[i].String(), fmt.Sprintf("v.field_id = '%s' AND v.option_id = '%s'", drop, opts[i])}
	}
	numCond := cond{num, "7.50", fmt.Sprintf("v.field_id = '%s' AND v.number_value = 7.5", num)}
	chkCond := cond{chk, "true", fmt.Sprintf("v.field_id = '%s' AND v.bool_value", chk)}
	dueCond := cond{due, "2026-03-01", fmt.Sprintf("v.field_id = '%s' AND v.date_value = '2026-03-01'", due)}
	filters := [][]cond{
		{optCond(0)},
		{optCond(1), chkCond},
		{optCond(0), numCond, chkCond},
		{optCond(2), dueCond, numCond},
		{optCond(0), optCond(1)}, // never both: empty
		{dueCond, dueCond},       // a term named twice
	}

	check := func(step string) {
		t.Helper()
		var stray int
		require.NoError(t, b.db.Pool.QueryRow(b.ctx, `
			WITH want AS (
				SELECT t.project_id, u.term, t.number >> 10 AS block, bit_or(set_bit(B'0'::bit(1024), t.number & 1023, 1)) AS bits
				FROM issue_filter_terms AS t, unnest(t.terms) AS u (term) WHERE t.project_id = $1 GROUP BY 1, 2, 3),
			got AS (SELECT project_id, term, block, bits FROM issue_term_blocks WHERE project_id = $1)
			SELECT count(*) FROM ((SELECT * FROM want EXCEPT SELECT * FROM got) UNION ALL (SELECT * FROM got EXCEPT SELECT * FROM want)) AS d`,
			b.project.ID).Scan(&stray))
		require.Zero(t, stray, "%s: the blocks are the narrow copy's bits", step)
		for _, conds := range filters {
			where := "true"
			var f issue.Filter
			label := step
			skip := false
			for _, c := range conds {
				if c.field == chk && chkDeleted {
					skip = true
				}
				where += " AND EXISTS (SELECT 1 FROM custom_field_values AS v WHERE v.issue_id = issues.id AND " + c.sql + ")"
				f.CustomFields = append(f.CustomFields, customfield.Filter{FieldID: c.field, Value: c.value})
				label += " " + c.value
			}
			if skip {
				continue
			}
			want := b.numbers(t, where, "number")
			if len(want) == 0 {
				want = nil // as requirePages gathers no page
			}
			b.requirePages(t, svc, f, want, []int{50, 7}, label)
		}
	}

	// setValues writes random values of the four fields for the issues numbered in
	// nums (one statement: a bulk write or an import's).
	setValues := func(where string) {
		t.Helper()
		exec(`DELETE FROM custom_field_values WHERE issue_id IN (SELECT id FROM issues WHERE project_id = $1 AND `+where+`)`, b.project.ID)
		exec(`INSERT INTO custom_field_values (issue_id, field_id, option_id, number_value, bool_value, date_value)
			SELECT i.id, f.id,
				CASE WHEN f.id = $2 THEN ($6::uuid[])[1 + (hashint4(i.number + $7) & 3) % 3] END,
				CASE WHEN f.id = $3 THEN (ARRAY[7.5, 7.50, 8])[1 + (hashint4(i.number * 3 + $7) & 3) % 3] END,
				CASE WHEN f.id = $4 THEN (hashint4(i.number * 5 + $7) & 1) = 0 END,
				CASE WHEN f.id = $5 THEN date '2026-03-01' + (hashint4(i.number * 7 + $7) & 1) END
			FROM issues AS i, custom_fields AS f
			WHERE i.project_id = $1 AND f.project_id = $1 AND `+where+` AND (hashint4(i.number * 11 + f.sort_order + $7) & 7) <> 0`,
			b.project.ID, drop, num, chk, due, opts[:], rng.IntN(1000))
	}

	// Issues numbered with gaps over three blocks and the edges of each (1023, 1024, 2047, 2048).
	nums := []int{1, 2, 1022, 1023, 1024, 1025, 2047, 2048, 2049}
	for len(nums) < 400 {
		nums = append(nums, 3+rng.IntN(3100))
	}
	exec(`INSERT INTO issues (project_id, number, key, title, status_id, reporter_id)
		SELECT $1, g, $2 || '-' || g, 'I', $3, $4 FROM (SELECT DISTINCT unnest($5::int[]) AS g) AS n`,
		b.project.ID, b.project.Key, b.todo, b.owner.UserID, nums)
	exec(`UPDATE projects SET issue_seq = (SELECT max(number) FROM issues WHERE project_id = $1) WHERE id = $1`, b.project.ID)
	check("no values")
	setValues("true")
	check("imported")

	for i := 0; i < 20; i++ {
		n := nums[rng.IntN(len(nums))]
		exec(`UPDATE custom_field_values SET option_id = $3 WHERE field_id = $2
			AND issue_id = (SELECT id FROM issues WHERE project_id = $1 AND number = $4)`, b.project.ID, drop, opts[rng.IntN(3)], n)
		exec(`UPDATE custom_field_values SET number_value = $3 WHERE field_id = $2
			AND issue_id = (SELECT id FROM issues WHERE project_id = $1 AND number = $4)`, b.project.ID, num, []float64{7.5, 8}[rng.IntN(2)], n)
	}
	check("single writes")

	exec(`UPDATE custom_field_values SET option_id = $3 WHERE field_id = $2 AND option_id = $4
		AND issue_id IN (SELECT id FROM issues WHERE project_id = $1 AND number % 3 = 0)`, b.project.ID, drop, opts[1], opts[0])
	exec(`UPDATE custom_field_values SET bool_value = NOT bool_value WHERE field_id = $1`, chk)
	check("bulk updates")

	setValues("number % 5 = 1")
	check("bulk rewrite")

	exec(`DELETE FROM custom_field_values WHERE field_id = $1 AND issue_id IN (SELECT id FROM issues WHERE number % 4 = 0)`, num)
	check("values deleted")

	exec(`DELETE FROM issues WHERE project_id = $1 AND (number % 7 = 0 OR number IN (1023, 1024))`, b.project.ID)
	check("issues deleted")

	for i := 0; i < 5; i++ {
		v, err := svc.Create(b.ctx, b.project, b.owner, issue.NewIssue{Title: "New", Type: issue.TypeTask, Priority: issue.PriorityLow})
		require.NoError(t, err)
		exec(`INSERT INTO custom_field_values (issue_id, field_id, option_id) VALUES ($1, $2, $3)`, v.ID, drop, opts[0])
		exec(`INSERT INTO custom_field_values (issue_id, field_id, bool_value) VALUES ($1, $2, true)`, v.ID, chk)
	}
	check("created one by one")

	tx, err := b.db.Pool.Begin(b.ctx)
	require.NoError(t, err)
	_, err = tx.Exec(b.ctx, `UPDATE custom_field_values SET option_id = $2 WHERE field_id = $1`, drop, opts[2])
	require.NoError(t, err)
	_, err = tx.Exec(b.ctx, `DELETE FROM issues WHERE project_id = $1 AND number % 2 = 0`, b.project.ID)
	require.NoError(t, err)
	require.NoError(t, tx.Rollback(b.ctx))
	check("rolled back")

	exec(`DELETE FROM custom_field_options WHERE id = $1`, opts[1])
	check("option deleted")

	exec(`DELETE FROM custom_fields WHERE id = $1`, chk)
	chkDeleted = true
	check("field deleted")

	exec(`DELETE FROM issues WHERE project_id = $1`, b.project.ID)
	check("all deleted")
	var left int
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, "SELECT count(*) FROM issue_term_blocks WHERE project_id = $1", b.project.ID).Scan(&left))
	require.Zero(t, left, "no empty block is kept")
}
