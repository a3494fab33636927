package issue_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestKeptMatchesFollowTermChanges proves a filtered list's kept matches (issue.Matches,
// migration 0058) serve pages only while they are current: every page equals the
// issues' values at the time of the read after a value written, a value written by a
// transaction still open when the matches were read and committed after, an issue
// deleted and a trim of the changes; a write in another project keeps them; and
// pages past the first are served from the entry (a failure here means none were).
func TestKeptMatchesFollowTermChanges(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t) // its own: the trim moves the database's horizon
	b, other := setup(t, db), setup(t, db)
	matches := issue.NewMatches(issue.MatchesBudget)
	svc := issue.NewService(b.db, bus(t, b.db, nil)).WithMatches(matches)
	for _, x := range []*bundle{b, other} {
		x.exec(t, `INSERT INTO issues (project_id, number, key, title, status_id, reporter_id, priority)
			SELECT $1, g, $2 || '-' || g, 'I', $3, $4, 'LOW' FROM generate_series(1, 40) AS g`,
			x.project.ID, x.project.Key, x.todo, x.owner.UserID)
	}
	blocked := b.field(t, "Blocked", "CHECKBOX", 1)
	otherField := other.field(t, "Blocked", "CHECKBOX", 1)
	b.exec(t, `INSERT INTO custom_field_values (issue_id, field_id, bool_value)
		SELECT id, $2, number % 3 <> 0 FROM issues WHERE project_id = $1`, b.project.ID, blocked)
	other.exec(t, `INSERT INTO custom_field_values (issue_id, field_id, bool_value)
		SELECT id, $2, true FROM issues WHERE project_id = $1`, other.project.ID, otherField)
	f := issue.Filter{CustomFields: []customfield.Filter{{FieldID: blocked, Value: "true"}}}
	ticked := "id IN (SELECT issue_id FROM custom_field_values WHERE bool_value)"
	pages := func(label string) {
		t.Helper()
		b.requirePages(t, svc, f, b.numbers(t, ticked, "number"), []int{7}, label)
	}
	setValue := func(number int, v bool) {
		t.Helper()
		b.exec(t, `UPDATE custom_field_values SET bool_value = $3
			WHERE field_id = $2 AND issue_id = (SELECT id FROM issues WHERE project_id = $1 AND number = $4)`,
			b.project.ID, blocked, v, number)
	}

	pages("first reads")
	hits := issue.MatchesHits(matches)
	require.Positive(t, hits, "the pages after the first are served from the kept matches")

	setValue(3, true)
	pages("after a value was ticked")
	setValue(1, false)
	pages("after a value was unticked")

	// Written by a transaction still open when the matches are read, committed after.
	tx, err := b.db.Pool.Begin(b.ctx)
	require.NoError(t, err)
	_, err = tx.Exec(b.ctx, `UPDATE custom_field_values SET bool_value = true
		WHERE field_id = $2 AND issue_id = (SELECT id FROM issues WHERE project_id = $1 AND number = 6)`, b.project.ID, blocked)
	require.NoError(t, err)
	setValue(9, true) // a committed write, so that the matches are read again now
	pages("while a write is open")
	require.NoError(t, tx.Commit(b.ctx))
	pages("after the open write committed")

	b.exec(t, "DELETE FROM issues WHERE project_id = $1 AND number = 2", b.project.ID)
	pages("after an issue was deleted")

	// Another project's change leaves the entry proven: the next pages are hits.
	before := issue.MatchesHits(matches)
	other.exec(t, "UPDATE custom_field_values SET bool_value = false WHERE field_id = $1", otherField)
	views, total, err := svc.List(b.ctx, b.project, f, 7, 7)
	require.NoError(t, err)
	require.Len(t, views, 7)
	require.Equal(t, len(b.numbers(t, ticked, "number")), total)
	require.Equal(t, before+1, issue.MatchesHits(matches), "another project's write keeps the entry")

	// A trim past the entry's snapshot: it is read again, right.
	var changes int
	require.NoError(t, db.Pool.QueryRow(b.ctx, "SELECT count(*) FROM filter_term_changes WHERE project_id = $1", b.project.ID).Scan(&changes))
	require.Positive(t, changes, "every write of the project's terms left a row")
	// A trim moves the horizon to the xmin the previous one recorded. Which xmin the
	// server reports depends on every transaction open on it (other packages' tests), so
	// the recorded one is set here to an xid after every write above, in this test's own
	// database: the trim must then delete them all and stop serving the entry.
	var set string
	require.NoError(t, db.Pool.QueryRow(b.ctx,
		"UPDATE list_change_horizon SET next_horizon = pg_current_xact_id() RETURNING next_horizon::text").Scan(&set))
	deleted, err := issue.TrimListChanges(b.ctx, db.Pool)
	require.NoError(t, err)
	require.GreaterOrEqual(t, deleted, int64(changes))
	require.NoError(t, db.Pool.QueryRow(b.ctx, "SELECT count(*) FROM filter_term_changes WHERE project_id = $1", b.project.ID).Scan(&changes))
	require.Zero(t, changes, "the trim deleted the rows below the horizon")
	var horizon, next string
	require.NoError(t, db.Pool.QueryRow(b.ctx, "SELECT horizon::text, next_horizon::text FROM list_change_horizon").Scan(&horizon, &next))
	require.Equal(t, set, horizon, "the trim moved the horizon to what the previous one recorded")
	require.NotEqual(t, set, next, "and recorded the xmin of its own time (never a committed transaction's id)")
	before = issue.MatchesHits(matches)
	_, _, err = svc.List(b.ctx, b.project, f, 7, 7)
	require.NoError(t, err)
	require.Equal(t, before, issue.MatchesHits(matches), "an entry older than the horizon is not served")
	setValue(12, true) // not logged as seen by an entry read before the trims
	pages("after the trims")
}

// TestKeptUpdateOrderFollowsIssueChanges proves the kept update order (issue.Matches,
// issue_changes of migration 0058) serves deep pages only while it is current: after
// an issue is updated, created or deleted, and updated by a transaction still open when
// the order was read, every page equals the order at the time of the read; a page
// before the keeping offset does not read the order whole.
func TestKeptUpdateOrderFollowsIssueChanges(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.PackageDB(t))
	matches := issue.NewMatches(issue.MatchesBudget)
	svc := issue.NewService(b.db, bus(t, b.db, nil)).WithMatches(matches)
	b.exec(t, `INSERT INTO issues (project_id, number, key, title, status_id, reporter_id, priority, updated_at)
		SELECT $1, g, $2 || '-' || g, 'I', $3, $4, 'LOW', timestamptz '2026-01-01' + make_interval(mins => (g * 7) % 500)
		FROM generate_series(1, 1100) AS g`, b.project.ID, b.project.Key, b.todo, b.owner.UserID)
	f := issue.Filter{Sort: issue.SortUpdated}
	deep := func(label string) {
		t.Helper()
		want := b.numbers(t, "true", "updated_at DESC, number DESC")
		for _, offset := range []int{1000, 1050, 1090} {
			views, total, err := svc.List(b.ctx, b.project, f, offset, 50)
			require.NoError(t, err)
			require.Equal(t, len(want), total, "%s: offset %d", label, offset)
			got := make([]int, len(views))
			for i, v := range views {
				got[i] = v.Number
			}
			require.Equal(t, want[offset:min(offset+50, len(want))], got, "%s: offset %d", label, offset)
		}
	}
	touch := func(q string, args ...any) {
		t.Helper()
		b.exec(t, q, append([]any{b.project.ID}, args...)...)
	}

	before := issue.MatchesHits(matches)
	_, _, err := svc.List(b.ctx, b.project, f, 950, 50)
	require.NoError(t, err)
	require.Equal(t, before, issue.MatchesHits(matches), "a page before the keeping offset does not read the order whole")
	deep("first reads")
	require.Positive(t, issue.MatchesHits(matches)-before, "deep pages are served from the kept order")

	// Until 10 s have passed, a dropped order is not read whole again: the pages are
	// read by their skip, and right.
	touch("UPDATE issues SET updated_at = timestamptz '2025-02-01' WHERE project_id = $1 AND number = 5")
	before = issue.MatchesHits(matches)
	deep("after a change, not read whole again yet")
	require.Equal(t, before, issue.MatchesHits(matches), "no page served from a dropped order")

	issue.SetRebuildEvery(matches, 0) // from here every deep read after a change reads it whole
	touch("UPDATE issues SET updated_at = timestamptz '2025-01-01' WHERE project_id = $1 AND number = 7")
	deep("after an issue moved to the end")
	touch(`INSERT INTO issues (project_id, number, key, title, status_id, reporter_id, priority, updated_at)
		VALUES ($1, 1101, $2 || '-1101', 'I', $3, $4, 'LOW', timestamptz '2024-01-01')`, b.project.Key, b.todo, b.owner.UserID)
	deep("after an issue was created")
	touch("DELETE FROM issues WHERE project_id = $1 AND number = 1101")
	deep("after an issue was deleted")

	tx, err := b.db.Pool.Begin(b.ctx)
	require.NoError(t, err)
	_, err = tx.Exec(b.ctx, "UPDATE issues SET updated_at = timestamptz '2024-06-01' WHERE project_id = $1 AND number = 9", b.project.ID)
	require.NoError(t, err)
	touch("UPDATE issues SET updated_at = timestamptz '2024-07-01' WHERE project_id = $1 AND number = 11") // read whole again now
	before = issue.MatchesHits(matches)
	deep("while a write is open")
	require.Positive(t, issue.MatchesHits(matches)-before, "the order read while the write was open serves pages")
	require.NoError(t, tx.Commit(b.ctx))
	deep("after the open write committed")
}

// TestKeptUpdateOrderTooBigIsNotKept: an order of more than a quarter of the budget is
// not kept, its pages stay right (read by their skip), and it is not read whole again
// on the next deep page.
func TestKeptUpdateOrderTooBigIsNotKept(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.PackageDB(t))
	matches := issue.NewMatches(2000) // keeps at most 500 numbers an entry
	issue.SetRebuildEvery(matches, 0) // so only its size keeps it from being read again
	svc := issue.NewService(b.db, bus(t, b.db, nil)).WithMatches(matches)
	b.exec(t, `INSERT INTO issues (project_id, number, key, title, status_id, reporter_id, priority, updated_at)
		SELECT $1, g, $2 || '-' || g, 'I', $3, $4, 'LOW', timestamptz '2026-01-01' + make_interval(mins => g % 300)
		FROM generate_series(1, 1100) AS g`, b.project.ID, b.project.Key, b.todo, b.owner.UserID)
	want := b.numbers(t, "true", "updated_at DESC, number DESC")
	for range 2 {
		views, total, err := svc.List(b.ctx, b.project, issue.Filter{Sort: issue.SortUpdated}, 1020, 50)
		require.NoError(t, err)
		require.Equal(t, 1100, total)
		got := make([]int, len(views))
		for i, v := range views {
			got[i] = v.Number
		}
		require.Equal(t, want[1020:1070], got)
	}
	require.Zero(t, issue.MatchesHits(matches))
	require.False(t, issue.MayBuild(matches, b.project.ID.String()+"|updated"), "not read whole again")
}

// TestTrimListChangesAfterRestore: in a database restored into another cluster, the
// logs and the horizon may hold transaction ids ahead of the new cluster's; a trim
// brings the horizon back to the present and deletes those rows, so kept lists are
// served again after one trim instead of never.
func TestTrimListChangesAfterRestore(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t) // its own: the trim moves the database's horizon
	b := setup(t, db)
	future := "(pg_current_xact_id()::text::bigint + 1000000)::text::xid8"
	b.exec(t, "UPDATE list_change_horizon SET horizon = "+future+", next_horizon = "+future)
	b.exec(t, "INSERT INTO issue_changes (project_id, xid) VALUES ($1, "+future+")", b.project.ID)
	b.exec(t, "INSERT INTO filter_term_changes (project_id, xid) VALUES ($1, "+future+")", b.project.ID)
	_, err := issue.TrimListChanges(b.ctx, db.Pool)
	require.NoError(t, err)
	var ahead int
	require.NoError(t, db.Pool.QueryRow(b.ctx, `SELECT
		(SELECT count(*) FROM issue_changes WHERE xid > pg_current_xact_id()) +
		(SELECT count(*) FROM filter_term_changes WHERE xid > pg_current_xact_id()) +
		(SELECT count(*) FROM list_change_horizon WHERE horizon > pg_current_xact_id() OR next_horizon > pg_current_xact_id())`).Scan(&ahead))
	require.Zero(t, ahead, "nothing ahead of the present is left")
}
