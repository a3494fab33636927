package report_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/report"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// bundle is one test's project (default workflow) inside a transaction that rolls back
// when the test ends.
type bundle struct {
	ctx              context.Context
	db               bun.IDB
	userID           uuid.UUID
	projectID        uuid.UUID
	todo, prog, done uuid.UUID
}

func setup(t *testing.T) *bundle {
	t.Helper()
	ctx := context.Background()
	tx, err := storetest.PackageDB(t).Bun.BeginTx(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	b := &bundle{ctx: ctx, db: tx}
	b.userID, b.projectID = b.newProject(t)
	var ss []store.WorkflowStatus
	require.NoError(t, tx.NewSelect().Model(&ss).
		Where("workflow_id = (SELECT workflow_id FROM projects WHERE id = ?)", b.projectID).Order("position").Scan(ctx))
	require.Len(t, ss, 3)
	b.todo, b.prog, b.done = ss[0].ID, ss[1].ID, ss[2].ID
	return b
}

// newProject inserts an owner and a project with the default workflow assigned.
func (b *bundle) newProject(t *testing.T) (owner, project uuid.UUID) {
	t.Helper()
	tag := strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:8])
	require.NoError(t, b.db.NewRaw("INSERT INTO users (email, display_name) VALUES (?, ?) RETURNING id",
		"rp-"+strings.ToLower(tag)+"@example.com", "Owner "+tag).Scan(b.ctx, &owner))
	require.NoError(t, b.db.NewRaw("INSERT INTO projects (key, name, owner_id) VALUES (?, ?, ?) RETURNING id",
		"R"+tag, "Project "+tag, owner).Scan(b.ctx, &project))
	_, err := workflow.CreateDefault(b.ctx, b.db, project)
	require.NoError(t, err)
	return owner, project
}

// sprint inserts a sprint; start and end are "YYYY-MM-DD" or "" for none.
func (b *bundle) sprint(t *testing.T, status, start, end string, planned *int) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, b.db.NewRaw(`INSERT INTO sprints (project_id, name, status, start_date, end_date, planned_points)
		VALUES (?, ?, ?, nullif(?, '')::date, nullif(?, '')::date, ?) RETURNING id`,
		b.projectID, "Sprint "+status, status, start, end, planned).Scan(b.ctx, &id))
	return id
}

// issue inserts an issue of the bundle's project in status, sprint (nil = backlog), with
// points (nil = none) and an updated_at ("" = now).
func (b *bundle) issue(t *testing.T, status uuid.UUID, sprint *uuid.UUID, points *int, updated string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, b.db.NewRaw(`
		WITH n AS (UPDATE projects SET issue_seq = issue_seq + 1 WHERE id = ? RETURNING key, issue_seq)
		INSERT INTO issues (project_id, number, key, title, status_id, reporter_id, sprint_id, story_points, updated_at)
		SELECT ?, n.issue_seq, n.key || '-' || n.issue_seq, 'An issue', ?, ?, ?, ?, coalesce(nullif(?, '')::timestamptz, now())
		FROM n RETURNING id`,
		b.projectID, b.projectID, status, b.userID, sprint, points, updated).Scan(b.ctx, &id))
	return id
}

// move records a STATUS_CHANGED activity at t: name is the stored display name, status
// the stored status id (nil: a row written before ids were kept).
func (b *bundle) move(t *testing.T, issue uuid.UUID, name string, status *uuid.UUID, at time.Time) {
	t.Helper()
	_, err := b.db.NewRaw(`INSERT INTO issue_activities (issue_id, actor_id, type, new_value, new_status_id, created_at)
		VALUES (?, ?, 'STATUS_CHANGED', ?, ?, ?)`, issue, b.userID, name, status, at).Exec(b.ctx)
	require.NoError(t, err)
}

func ptr[T any](v T) *T { return &v }

type burndownRow struct {
	date             string
	ideal, remaining int64
}

func burndownRows(bd *report.Burndown) []burndownRow {
	out := make([]burndownRow, len(bd.Days))
	for i, d := range bd.Days {
		out[i] = burndownRow{d.Date, d.IdealPoints, d.RemainingPoints}
	}
	return out
}

// TestBurndownHandComputed checks rule 2 on a 10-day sprint (2026-03-02 to 2026-03-12:
// length 10, 11 dates) viewed on 2026-03-08.
func TestBurndownHandComputed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	today := time.Date(2026, 3, 8, 17, 0, 0, 0, time.UTC)
	s := b.sprint(t, "ACTIVE", "2026-03-02", "2026-03-12", ptr(23))
	b.issue(t, b.done, &s, ptr(5), "2026-03-04T10:00:00Z") // done on the 4th
	b.issue(t, b.done, &s, ptr(8), "2026-03-06T23:59:59Z") // done at the last second of the 6th
	b.issue(t, b.done, &s, ptr(4), "2026-03-11T12:00:00Z") // last updated after today
	b.issue(t, b.prog, &s, ptr(3), "2026-03-03T09:00:00Z") // not done
	b.issue(t, b.todo, &s, nil, "")                        // null points count 0
	b.issue(t, b.todo, &s, ptr(7), "")                     // not done
	b.issue(t, b.todo, nil, ptr(100), "")                  // backlog: not in the sprint
	other := b.sprint(t, "PLANNED", "2026-03-02", "2026-03-12", nil)
	b.issue(t, b.todo, &other, ptr(50), "")

	bd, err := report.BurndownOf(b.ctx, b.db, b.projectID, s, today)
	require.NoError(t, err)
	require.Equal(t, s, bd.SprintID)
	// ideal(d) = floor(23 × (10 − d) / 10). Remaining up to today: all 27 points minus
	// the DONE issues last updated before the end of the date (5 from the 4th, 8 more
	// from the 6th; the 4-point issue's update lies after every past date). After today:
	// the current not-done total 3 + 0 + 7.
	require.Equal(t, []burndownRow{
		{"2026-03-02", 23, 27}, {"2026-03-03", 20, 27}, {"2026-03-04", 18, 22}, {"2026-03-05", 16, 22},
		{"2026-03-06", 13, 14}, {"2026-03-07", 11, 14}, {"2026-03-08", 9, 14},
		{"2026-03-09", 6, 10}, {"2026-03-10", 4, 10}, {"2026-03-11", 2, 10}, {"2026-03-12", 0, 10},
	}, burndownRows(bd))

	// Without plannedPoints the planned total is the sum of the sprint's points (27).
	_, err = b.db.NewRaw("UPDATE sprints SET planned_points = NULL WHERE id = ?", s).Exec(b.ctx)
	require.NoError(t, err)
	bd, err = report.BurndownOf(b.ctx, b.db, b.projectID, s, today)
	require.NoError(t, err)
	ideal := make([]int64, len(bd.Days))
	for i, d := range bd.Days {
		ideal[i] = d.IdealPoints
	}
	require.Equal(t, []int64{27, 24, 21, 18, 16, 13, 10, 8, 5, 2, 0}, ideal)

	// A plannedPoints snapshot of 0 is a value, not "empty".
	_, err = b.db.NewRaw("UPDATE sprints SET planned_points = 0 WHERE id = ?", s).Exec(b.ctx)
	require.NoError(t, err)
	bd, err = report.BurndownOf(b.ctx, b.db, b.projectID, s, today)
	require.NoError(t, err)
	require.Zero(t, bd.Days[0].IdealPoints)
}

func TestBurndownDates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	today := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

	noStart := b.sprint(t, "PLANNED", "", "2026-03-12", ptr(10))
	b.issue(t, b.todo, &noStart, ptr(10), "")
	bd, err := report.BurndownOf(b.ctx, b.db, b.projectID, noStart, today)
	require.NoError(t, err)
	require.NotNil(t, bd.Days)
	require.Empty(t, bd.Days, "no startDate: no days")

	// No endDate: the sprint runs 14 days counting its start day, so the last is
	// startDate + 13.
	noEnd := b.sprint(t, "ACTIVE", "2026-03-02", "", ptr(13))
	b.issue(t, b.todo, &noEnd, ptr(6), "")
	bd, err = report.BurndownOf(b.ctx, b.db, b.projectID, noEnd, today)
	require.NoError(t, err)
	require.Len(t, bd.Days, 14)
	require.Equal(t, report.DefaultSprintDays, len(bd.Days))
	require.Equal(t, "2026-03-02", bd.Days[0].Date)
	require.Equal(t, "2026-03-15", bd.Days[13].Date)
	for d, day := range bd.Days {
		require.Equal(t, int64(13-d), day.IdealPoints, "13 points over a length of 13 days: one a day, 0 on the last")
		require.Equal(t, int64(6), day.RemainingPoints, "every date is after today")
	}

	oneDay := b.sprint(t, "CLOSED", "2026-03-02", "2026-03-02", ptr(9))
	bd, err = report.BurndownOf(b.ctx, b.db, b.projectID, oneDay, today)
	require.NoError(t, err)
	require.Equal(t, []report.Day{{Date: "2026-03-02", IdealPoints: 9, RemainingPoints: 0}}, bd.Days,
		"a one-day sprint shows its planned points; no issues remain")

	backwards := b.sprint(t, "PLANNED", "2026-03-10", "2026-03-02", ptr(9))
	bd, err = report.BurndownOf(b.ctx, b.db, b.projectID, backwards, today)
	require.NoError(t, err)
	require.Empty(t, bd.Days, "an end before the start has no days")
}

func TestVelocity(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.sprint(t, "CLOSED", "2026-01-05", "2026-01-16", ptr(10))
	_, err := b.db.NewRaw("UPDATE sprints SET completed_points = 8 WHERE id = ?", first).Exec(b.ctx)
	require.NoError(t, err)
	b.sprint(t, "PLANNED", "", "", ptr(99))
	b.sprint(t, "ACTIVE", "2026-02-02", "", ptr(99))
	second := b.sprint(t, "CLOSED", "", "", nil)
	_, otherProject := b.newProject(t)
	_, err = b.db.NewRaw("INSERT INTO sprints (project_id, name, status, planned_points) VALUES (?, 'Foreign', 'CLOSED', 5)",
		otherProject).Exec(b.ctx)
	require.NoError(t, err)

	entries, err := report.Velocity(b.ctx, b.db, b.projectID)
	require.NoError(t, err)
	require.Equal(t, []report.VelocityEntry{
		{SprintID: first, SprintName: "Sprint CLOSED", PlannedPoints: 10, CompletedPoints: 8},
		{SprintID: second, SprintName: "Sprint CLOSED", PlannedPoints: 0, CompletedPoints: 0},
	}, entries, "CLOSED sprints only, in creation order, null points as 0")

	_, empty := b.newProject(t)
	entries, err = report.Velocity(b.ctx, b.db, empty)
	require.NoError(t, err)
	require.NotNil(t, entries)
	require.Empty(t, entries)
}

type cycleRow struct {
	key   uuid.UUID
	hours *float64
}

func TestCycleTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	s := b.sprint(t, "CLOSED", "2026-03-02", "2026-03-12", nil)

	straight := b.issue(t, b.done, &s, nil, "")
	b.move(t, straight, "In Progress", &b.prog, at(0))
	b.move(t, straight, "Done", &b.done, at(90*time.Minute+30*time.Second)) // 90.5 minutes: 90 whole

	twice := b.issue(t, b.done, &s, nil, "")
	b.move(t, twice, "In Progress", &b.prog, at(0))
	b.move(t, twice, "In Progress", &b.prog, at(60*time.Minute))
	b.move(t, twice, "Done", &b.done, at(150*time.Minute))
	b.move(t, twice, "To Do", &b.todo, at(200*time.Minute))
	b.move(t, twice, "Done", &b.done, at(300*time.Minute))

	noStart := b.issue(t, b.done, &s, nil, "")
	b.move(t, noStart, "Done", &b.done, at(0))

	doneFirst := b.issue(t, b.done, &s, nil, "")
	b.move(t, doneFirst, "Done", &b.done, at(0))
	b.move(t, doneFirst, "In Progress", &b.prog, at(10*time.Minute))
	b.move(t, doneFirst, "Done", &b.done, at(20*time.Minute))

	sameMoment := b.issue(t, b.done, &s, nil, "")
	b.move(t, sameMoment, "In Progress", &b.prog, at(0))
	b.move(t, sameMoment, "Done", &b.done, at(0))

	untouched := b.issue(t, b.todo, &s, nil, "")

	// The stored ids decide, not the display names: by name this issue went DONE first.
	byID := b.issue(t, b.done, &s, nil, "")
	b.move(t, byID, "Done", &b.prog, at(0))
	b.move(t, byID, "In Progress", &b.done, at(30*time.Minute))

	// Rows without an id (written before ids were kept) resolve by name.
	legacy := b.issue(t, b.done, &s, nil, "")
	b.move(t, legacy, "In Progress", nil, at(0))
	b.move(t, legacy, "Done", nil, at(45*time.Minute))

	b.issue(t, b.done, nil, nil, "") // not in the sprint

	c, err := report.CycleTime(b.ctx, b.db, b.projectID, s)
	require.NoError(t, err)
	require.Equal(t, s, c.SprintID)
	got := make([]cycleRow, len(c.Issues))
	for i, is := range c.Issues {
		got[i] = cycleRow{is.IssueID, is.Hours()}
		require.NotEmpty(t, is.IssueKey)
	}
	require.Equal(t, []cycleRow{
		{straight, ptr(1.5)}, {twice, ptr(2.5)}, {noStart, nil}, {doneFirst, nil}, {sameMoment, nil},
		{untouched, nil}, {byID, ptr(0.5)}, {legacy, ptr(0.75)},
	}, got)
	require.NotNil(t, c.AverageHours)
	require.Equal(t, (90.0+150+30+45)/4/60, *c.AverageHours)

	// Without a sprint: the average per CLOSED sprint, null for one without cycle times.
	quiet := b.sprint(t, "CLOSED", "", "", nil)
	b.issue(t, b.todo, &quiet, nil, "")
	open := b.sprint(t, "ACTIVE", "", "", nil)
	opened := b.issue(t, b.done, &open, nil, "")
	b.move(t, opened, "In Progress", &b.prog, at(0))
	b.move(t, opened, "Done", &b.done, at(time.Hour))
	avgs, err := report.CycleTimeBySprint(b.ctx, b.db, b.projectID)
	require.NoError(t, err)
	require.Len(t, avgs, 2)
	require.Equal(t, s, avgs[0].SprintID)
	require.InDelta(t, 1.3125, *avgs[0].AverageHours, 1e-12)
	require.Equal(t, quiet, avgs[1].SprintID)
	require.Nil(t, avgs[1].AverageHours)
}

func TestCycleTimeEmptySprint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.sprint(t, "ACTIVE", "", "", nil)
	c, err := report.CycleTime(b.ctx, b.db, b.projectID, s)
	require.NoError(t, err)
	require.NotNil(t, c.Issues)
	require.Empty(t, c.Issues, "rule 4")
	require.Nil(t, c.AverageHours)
}

// TestCycleTimeDuplicateNames resolves name-only rows by the lowest-position status of
// that name in the project's workflow.
func TestCycleTimeDuplicateNames(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.db.NewRaw(`INSERT INTO workflow_statuses (workflow_id, name, category, position)
		SELECT workflow_id, 'In Progress', 'DONE', 9 FROM projects WHERE id = ?`, b.projectID).Exec(b.ctx)
	require.NoError(t, err)
	s := b.sprint(t, "ACTIVE", "", "", nil)
	is := b.issue(t, b.done, &s, nil, "")
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	b.move(t, is, "In Progress", nil, t0)
	b.move(t, is, "Done", nil, t0.Add(time.Hour))
	c, err := report.CycleTime(b.ctx, b.db, b.projectID, s)
	require.NoError(t, err)
	require.Equal(t, ptr(1.0), c.Issues[0].Hours())
}

func TestSprintMustBelongToProject(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.sprint(t, "ACTIVE", "2026-03-02", "", nil)
	_, other := b.newProject(t)
	today := time.Now()

	_, err := report.BurndownOf(b.ctx, b.db, other, s, today)
	require.ErrorIs(t, err, report.ErrSprintNotInProject)
	_, err = report.CycleTime(b.ctx, b.db, other, s)
	require.ErrorIs(t, err, report.ErrSprintNotInProject)
	_, err = report.BurndownOf(b.ctx, b.db, b.projectID, uuid.New(), today)
	require.ErrorIs(t, err, report.ErrSprintNotFound)
	_, err = report.CycleTime(b.ctx, b.db, b.projectID, uuid.New())
	require.ErrorIs(t, err, report.ErrSprintNotFound)
}
