package issue

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/store"
)

// listStatement is the statement of one list page, the statement of the total alone
// (for a page past the end, which has no row to carry it) and their arguments: the
// total's are all but the last, the offset. The SQL text depends only on which filters
// are set and on the page size, so each shape is prepared once per connection.
//
// The page's keys are found first, on issues alone (an index-only scan of the order's
// index unfiltered; filtered, the matches' numbers gathered in order into an array and
// sliced), and only the page's rows are then joined to their status, people, sprint
// and labels (RowColumns): a deep page costs the skipped index entries or array
// elements, not the joins of every skipped row. The total is the project's kept count
// unfiltered, else the length of the matches' array. The custom fields and their
// options come from f.FieldTypes, else once per statement (an InitPlan, decoded from
// the first row); the values with the row itself (custom_packed, kept by the triggers
// of migrations 0027 and 0028). docs/performance.md#the-issue-list-pays-for-its-page-not-for-the-pages-before-it
// has the measurements behind each choice.
//
// In a cursor walk (f.After) the page is the limit issues after the cursor's in the
// order, by a keyset predicate (Filter.keyset) on the order's index instead of an
// offset: the last page of a walk costs what the first does, filtered or not. The
// total is then counted beside it (a filtered total reads every match, as above).
//
// A search with no other filter and no sort is ranked (search.rankedKeys) and its total
// counted up to countCap (searchCountLimit), beyond which it is not exact; countCap is
// 0 when the total is exact.
//
// With keep, a list read from the narrow copy of the terms also returns, on the row of
// the page's first issue, every match's number (nums) and the snapshot they were read
// under (snap), for Matches to keep; other rows and other lists return them NULL.
func listStatement(p Project, f Filter, conds []customfield.Condition, today time.Time, offset, limit int, keep bool) (query, count string, args []any, countArgs, countCap int) {
	var ps params
	project := ps.add(store.UUID(p.ID))
	where := f.where(&ps, today)
	var sr search
	if f.Q != "" {
		sr = newSearch(&ps, f.Q, f.Lang)
	}
	// terms: cf equalities alone, in key order, are answered by the narrow copy of the
	// terms (issue_filter_terms, migration 0029); any other filtered list reads the
	// issue rows' own.
	terms, narrow := "", false
	if where == "" && f.Q == "" && f.Sort != SortUpdated {
		terms, narrow = customfield.Terms(conds, "t", ps.add)
	}
	if !narrow {
		if cf := customfield.SQL(conds, "i", ps.add); cf != "" {
			where += " AND " + cf
		}
	}
	join := ""
	if f.Overdue {
		join = " JOIN workflow_statuses AS s ON s.id = i.status_id"
	}
	total := "(SELECT coalesce(max(issues), 0) FROM issue_counts WHERE project_id = " + project + ")"
	count = "SELECT " + total
	// matches is the FROM and WHERE of a filtered list's matches, as alias (i, t or x),
	// in order.
	matches := "issues AS i" + join + "\n\t\tWHERE i.project_id = " + project + where
	alias, order, headline := "i", f.order("i"), "NULL::text"
	switch {
	case narrow:
		alias = "t" // key order: the number is all it sorts by
		matches, order = "issue_filter_terms AS t\n\t\tWHERE t.project_id = "+project+" AND "+terms, f.order("t")
	case f.Q != "" && where == "" && f.Sort != SortUpdated:
		// A search alone is answered by the documents (which carry project, number and
		// key): no issue row is read but the page's.
		alias = "x"
		matches, order = "issue_search AS x\n\t\tWHERE x.project_id = "+project+" AND "+sr.match, f.order("x")
	case f.Q != "":
		matches = "issues AS i JOIN issue_search AS x ON x.issue_id = i.id" + join + "\n\t\tWHERE i.project_id = " + project +
			where + " AND " + sr.match
	}
	if f.Q != "" {
		// Without a sort, by rank; the page's rows carry a headline (on the page's rows
		// alone: its cost is bounded by the page size).
		if f.Sort == "" {
			order = sr.rank + ", " + alias + ".number ASC"
		}
		headline = sr.headline
	}
	filtered := where != "" || narrow || f.Q != ""
	if filtered {
		count = "SELECT count(*) FROM " + matches
	}
	ranked := f.Q != "" && f.Sort == "" && where == "" && !narrow
	if ranked {
		countCap = searchCountLimit(offset, limit)
		count = boundedCount(matches, countCap)
	}
	// keys is the page's keys (k): the rows are joined on rowJoin and sorted by rowOrder.
	// Each row is found in a LATERAL sub-select (LIMIT 1 keeps the planner from pulling
	// it up into a plain join), so always by one index probe per key: as a plain join,
	// reading a table of narrow rows whole and hashing it can look cheaper to the
	// planner than one probe per key, and the page would cost a scan of every issue
	// (TestListPageRowsByIndexProbe).
	var keys, extra string
	rowJoin, rowOrder := "i.id = k.id", f.order("k")
	countArgs = len(ps)
	switch {
	case f.After != nil:
		// The count runs on the arguments before the keyset's (countArgs). A search
		// walks by cursor only in an explicit sort (Filter.OrderName): rank is no key.
		if filtered {
			total = "(SELECT count(*) FROM " + matches + ")"
		}
		keys = `SELECT ` + alias + `.number, ` + total + ` AS total
	FROM ` + matches + ` AND ` + f.keyset(&ps, alias) + `
	ORDER BY ` + order + `
	LIMIT ` + strconv.Itoa(limit)
		rowJoin, rowOrder = "i.project_id = "+project+" AND i.number = k.number", f.order("i")
	case ranked:
		off := ps.add(min(offset, math.MaxInt32-limit-SearchCountAhead-1))
		countArgs = len(ps) - 1
		keys = sr.rankedKeys("x.project_id = "+project, off, limit, "x.number ASC")
		rowJoin, rowOrder = "i.project_id = "+project+" AND i.number = k.number", "k.ord"
		headline = sr.tieredHeadline("k.tier")
	case filtered:
		// Every match is read for the total anyway, so the matches' numbers are
		// gathered in the list's order into one array, whose length is the total, and
		// only the page's slice of it is joined back to issues (by the project's
		// number index). A window count over the sorted matches would cost as much
		// again as finding them; and with no LIMIT on the matches, the planner never walks
		// the order's index testing every issue in the hope of stopping early. The
		// page's rows are found by number and kept in the slice's order. The offset
		// is clamped to what an array subscript holds: past the end either way.
		off := ps.add(min(offset, math.MaxInt32-limit-1))
		countArgs = len(ps) - 1
		kept := ""
		if keep && narrow {
			kept = `, CASE WHEN u.ord = 1 THEN m.nums END AS nums, CASE WHEN u.ord = 1 THEN pg_current_snapshot()::text END AS snap`
			extra = ", k.nums, k.snap"
		}
		keys = `SELECT u.number, u.ord, cardinality(m.nums) AS total` + kept + `
	FROM (SELECT array_agg(` + alias + `.number ORDER BY ` + order + `) AS nums
		FROM ` + matches + `) AS m
	CROSS JOIN LATERAL unnest(m.nums[(SELECT ` + off + `::int) + 1 : (SELECT ` + off + `::int) + ` + strconv.Itoa(limit) + `])
		WITH ORDINALITY AS u (number, ord)`
		rowJoin, rowOrder = "i.project_id = "+project+" AND i.number = k.number", "k.ord"
	default:
		// Unfiltered, the total is known before the scan: a page in the second half is
		// read from the far end of the order's index, skipping the entries after it
		// rather than all before it, so the last page costs what the first does. Only
		// one branch runs (each is gated by a one-time filter on n); both read the
		// same snapshot as the total. The size stays a literal LIMIT of the scan (the
		// partial last page is cut by the outer LIMIT): with a computed one the planner
		// guesses a tenth of the project's issues and joins the page by hash joins.
		//
		// In key order, a project whose numbers have no gap (nothing deleted: as many
		// issues as the highest number, and numbers are unique and positive) holds
		// exactly the numbers 1 to total, so the page starting at skip is the issues
		// numbered above skip: one range of the index, nothing skipped at all.
		size := strconv.Itoa(limit)
		dense, gapped, denseColumn := "", "", ""
		if f.Sort != SortUpdated {
			denseColumn = `, total = (SELECT coalesce(max(number), 0) FROM issues WHERE project_id = ` + project + `) AS dense`
			dense = `
	(SELECT i.id, ` + f.keyColumns("i") + `, (SELECT total FROM n) AS total
	FROM issues AS i
	WHERE i.project_id = ` + project + ` AND i.number > (SELECT skip FROM n) AND (SELECT dense FROM n)
	ORDER BY ` + f.order("i") + `
	LIMIT ` + size + `)
	UNION ALL`
			gapped = "NOT dense AND "
		}
		keys = `WITH n AS (SELECT *` + denseColumn + `
		FROM (SELECT ` + total + ` AS total, (SELECT ` + ps.add(offset) + `::bigint) AS skip) AS t)` + dense + `
	(SELECT i.id, ` + f.keyColumns("i") + `, (SELECT total FROM n) AS total
	FROM issues AS i
	WHERE i.project_id = ` + project + ` AND (SELECT ` + gapped + `skip * 2 < total FROM n)
	ORDER BY ` + f.order("i") + `
	LIMIT ` + size + ` OFFSET (SELECT skip FROM n))
	UNION ALL
	(SELECT * FROM (
		SELECT i.id, ` + f.keyColumns("i") + `, (SELECT total FROM n) AS total
		FROM issues AS i
		WHERE i.project_id = ` + project + ` AND (SELECT ` + gapped + `skip * 2 >= total FROM n)
		ORDER BY ` + f.reverseOrder("i") + `
		LIMIT ` + size + ` OFFSET (SELECT greatest(0, total - skip - ` + size + `) FROM n)
	) AS r LIMIT (SELECT greatest(0, least(` + size + `, total - skip)) FROM n))`
	}
	query = pageStatement(f, project, keys, rowJoin, rowOrder, headline, extra)
	return query, count, ps, countArgs, countCap
}

// pageStatement joins the page's keys (k: a number or an id, the total) to their rows,
// sorted by rowOrder, with the columns listScan reads and then extra.
func pageStatement(f Filter, project, keys, rowJoin, rowOrder, headline, extra string) string {
	// The field definitions, unless the access statement read them (FieldTypesRead).
	defs := "NULL::text"
	if !f.FieldTypes.read() {
		defs = packedFieldsSQL(project)
	}
	return `WITH k AS (
	` + keys + `
)
SELECT ` + RowColumns + `, k.total, i.custom_packed, ` + defs + ` AS defs, ` + headline + ` AS headline` + extra + `
FROM k
CROSS JOIN LATERAL (SELECT * FROM issues AS i WHERE ` + rowJoin + ` LIMIT 1) AS i
` + RowJoins + `
ORDER BY ` + rowOrder
}

// keptKind is what a kept list depends on: the table of changes that proves it current.
type keptKind string

const (
	// keptTerms: a list of cf equalities alone in key order, the numbers of its
	// matches, proven by filter_term_changes.
	keptTerms keptKind = "filter_term_changes"
	// keptUpdated: the unfiltered list in update order, every number of the project
	// in that order, proven by issue_changes.
	keptUpdated keptKind = "issue_changes"
)

// keptKey is the key Matches keeps the list of p by f under, and what it depends on:
// "" unless it is read by offset, and either of cf equalities alone in key order (the
// narrow copy of the terms) or unfiltered in update order.
func keptKey(p Project, f Filter, conds []customfield.Condition, today time.Time) (string, keptKind) {
	if f.After != nil || f.Q != "" {
		return "", ""
	}
	var ps params
	if f.where(&ps, today) != "" {
		return "", ""
	}
	if f.Sort == SortUpdated {
		if len(conds) > 0 {
			return "", ""
		}
		return p.ID.String() + "|updated", keptUpdated
	}
	var key strings.Builder
	key.WriteString(p.ID.String())
	if _, ok := customfield.Terms(conds, "t", func(v any) string {
		fmt.Fprintf(&key, "|%T:%v", v, v)
		return "$1"
	}); !ok {
		return "", ""
	}
	return key.String(), keptTerms
}

// keptStatement reads the page of kept numbers (nums, the total of total) read under
// snap, when they are still current: no transaction snap did not see has since
// changed what they depend on (kind's table of changes, migration 0058) for p, and
// snap is not older than the changes kept (list_change_horizon). Otherwise it returns
// no row.
func keptStatement(p Project, f Filter, kind keptKind, nums []int32, total int, snap string) (string, []any) {
	var ps params
	project := ps.add(store.UUID(p.ID))
	keys := `SELECT u.number, u.ord, ` + ps.add(total) + `::int AS total
	FROM unnest(` + ps.add(nums) + `::int[]) WITH ORDINALITY AS u (number, ord)
	WHERE (SELECT pg_snapshot_xmin(s.snap) >= h.horizon AND NOT EXISTS (
			SELECT 1 FROM ` + string(kind) + ` AS c
			WHERE c.project_id = ` + project + ` AND c.xid >= pg_snapshot_xmin(s.snap)
				AND NOT pg_visible_in_snapshot(c.xid, s.snap))
		FROM (SELECT ` + ps.add(snap) + `::pg_snapshot AS snap) AS s, list_change_horizon AS h)`
	return pageStatement(f, project, keys, "i.project_id = "+project+" AND i.number = k.number", "k.ord", "NULL::text", ""), ps
}

// updatedOrderStatement reads every number of the project in update order, with the
// snapshot it was read under, for Matches to keep. An ARRAY of a sub-select keeps the
// sub-select's order, here the order's index read in its order (an aggregate's own
// ORDER BY would sort them again).
const updatedOrderStatement = `SELECT ARRAY(SELECT i.number FROM issues AS i WHERE i.project_id = $1
	ORDER BY i.updated_at DESC, i.number DESC), pg_current_snapshot()::text`
