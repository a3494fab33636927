package issue_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivertest"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// bundle is one test's project (default workflow) with its owner and a second member.
type bundle struct {
	ctx              context.Context
	db               *store.DB
	project          issue.Project
	owner, member    issue.Actor
	todo, prog, done uuid.UUID
}

func setup(t testing.TB, db *store.DB) *bundle {
	t.Helper()
	ctx := context.Background()
	b := &bundle{ctx: ctx, db: db}
	user := func(name string) issue.Actor {
		a := issue.Actor{Actor: audit.Actor{UserID: uuid.New(), Email: strings.ToLower(name) + "-" + uuid.NewString()[:8] + "@example.com"},
			DisplayName: name}
		_, err := db.Pool.Exec(ctx, "INSERT INTO users (id, email, display_name) VALUES ($1, $2, $3)", a.UserID, a.Email, a.DisplayName)
		require.NoError(t, err)
		return a
	}
	b.owner, b.member = user("Owner"), user("Member")
	b.owner.MemberRole, b.member.MemberRole = "ADMIN", "MEMBER"
	b.project = issue.Project{ID: uuid.New(), Key: "D" + strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:7])}
	_, err := db.Pool.Exec(ctx, "INSERT INTO projects (id, key, name, owner_id) VALUES ($1, $2, 'P', $3)", b.project.ID, b.project.Key, b.owner.UserID)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, "INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, 'ADMIN'), ($1, $3, 'MEMBER')",
		b.project.ID, b.owner.UserID, b.member.UserID)
	require.NoError(t, err)
	wf, err := workflow.CreateDefault(ctx, db.Bun, b.project.ID)
	require.NoError(t, err)
	b.project.WorkflowID = &wf.ID
	rows, err := db.Pool.Query(ctx, "SELECT id FROM workflow_statuses WHERE workflow_id = $1 ORDER BY position", wf.ID)
	require.NoError(t, err)
	var ids []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.Len(t, ids, 3)
	b.todo, b.prog, b.done = ids[0], ids[1], ids[2]
	return b
}

// bus is an event bus over db's insert-only River client with the given consumers.
func bus(t testing.TB, db *store.DB, consumers map[string]event.Consumer) *event.Bus {
	t.Helper()
	client, err := river.NewClient(riverdatabasesql.New(db.SQL), &river.Config{})
	require.NoError(t, err)
	b := event.NewBus(client)
	for name, c := range consumers {
		b.Register(c, name)
	}
	return b
}

func (b *bundle) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, query, args...).Scan(&n))
	return n
}

func TestParseRef(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	for in, want := range map[string]issue.Ref{
		id.String(): {ID: id},
		"ABC-12":    {Key: "ABC-12"},
		"abc-12":    {Key: "ABC-12"},
		"A1-1":      {Key: "A1-1"},
	} {
		got, ok := issue.ParseRef(in)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "ABC", "ABC-", "-12", "A-1", "ABC-12-3", "ABCDEFGHIJK-1", "ABC-x", strings.ReplaceAll(id.String(), "-", "")} {
		_, ok := issue.ParseRef(bad)
		require.False(t, ok, bad)
	}
}

// A create whose transaction fails after the key was allocated gives the number back:
// the next create gets it.
func TestCreateRollbackGivesNumberBack(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.PackageDB(t))
	boom := errors.New("consumer failed")
	failing := issue.NewService(b.db, bus(t, b.db, map[string]event.Consumer{
		issue.EventCreated: func(context.Context, bun.Tx, event.Event) ([]river.InsertManyParams, error) { return nil, boom },
	}))
	_, err := failing.Create(b.ctx, b.project, b.owner, issue.NewIssue{Title: "Lost", Type: issue.TypeTask, Priority: issue.PriorityMedium})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM issues WHERE project_id = $1", b.project.ID))
	require.Equal(t, 0, b.count(t, "SELECT issue_seq FROM projects WHERE id = $1", b.project.ID))

	ok := issue.NewService(b.db, bus(t, b.db, nil))
	v, err := ok.Create(b.ctx, b.project, b.owner, issue.NewIssue{Title: "Kept", Type: issue.TypeTask, Priority: issue.PriorityMedium})
	require.NoError(t, err)
	require.Equal(t, b.project.Key+"-1", v.Key)
	require.Equal(t, 1, v.Number)
}

// probeArgs is a job a test consumer enqueues for every event it sees.
type probeArgs struct {
	IssueKey string `json:"issueKey"`
	Event    string `json:"event"`
}

func (probeArgs) Kind() string { return "issue_test.probe" }

// Consumers run inside the change's transaction: they see the new row through tx while
// other connections do not yet, and their jobs commit with the change.
func TestConsumersRunInTheChangeTransaction(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	b := setup(t, db)
	var seen []string
	probe := func(ctx context.Context, tx bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
		c := ev.(issue.Created)
		inTx, err := tx.NewSelect().Table("issues").Where("id = ?", c.IssueID).Exists(ctx)
		require.NoError(t, err)
		outside, err := db.Bun.NewSelect().Table("issues").Where("id = ?", c.IssueID).Exists(ctx)
		require.NoError(t, err)
		seen = append(seen, c.IssueKey)
		require.True(t, inTx, "the consumer sees the row in the transaction")
		require.False(t, outside, "nobody else sees it before commit")
		require.Equal(t, b.project.Key, c.ProjectKey)
		require.Equal(t, "Probed", c.Title)
		require.Equal(t, b.owner.Email, c.Email)
		require.Equal(t, b.todo, c.StatusID)
		require.Equal(t, "To Do", c.StatusName)
		return []river.InsertManyParams{{Args: probeArgs{IssueKey: c.IssueKey, Event: ev.EventName()}}}, nil
	}
	svc := issue.NewService(db, bus(t, db, map[string]event.Consumer{issue.EventCreated: probe}))
	v, err := svc.Create(b.ctx, b.project, b.owner, issue.NewIssue{Title: "Probed", Type: issue.TypeBug, Priority: issue.PriorityLow})
	require.NoError(t, err)
	require.Equal(t, []string{v.Key}, seen)
	rivertest.RequireInserted(b.ctx, t, riverdatabasesql.New(db.SQL), &probeArgs{IssueKey: v.Key, Event: issue.EventCreated}, nil)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job AS j JOIN issues AS i ON i.id = $1
		WHERE j.kind = 'issue_test.probe' AND j.xmin = i.xmin`, v.ID), "the job and the row share a transaction")
}

// The update's events carry what later consumers (webhooks, automation, board push,
// notifications) need without reading the issue again.
func TestUpdateEvents(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.PackageDB(t))
	var events []event.Event
	record := func(_ context.Context, _ bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
		events = append(events, ev)
		return nil, nil
	}
	svc := issue.NewService(b.db, bus(t, b.db, map[string]event.Consumer{
		issue.EventStatusChanged: record, issue.EventFieldChanged: record, issue.EventDeleted: record,
	}))
	v, err := svc.Create(b.ctx, b.project, b.owner, issue.NewIssue{Title: "Before", Type: issue.TypeTask, Priority: issue.PriorityMedium})
	require.NoError(t, err)
	require.Empty(t, events, "Created has no consumer here")

	title, prio, points := "After", issue.PriorityHigh, 5
	_, err = svc.Update(b.ctx, b.project, b.member, issue.Ref{Key: v.Key}, issue.Patch{Title: &title, Priority: &prio,
		StoryPoints: &points, AssigneeID: &b.member.UserID, StatusID: &b.prog})
	require.NoError(t, err)
	require.Len(t, events, 5)
	st := events[0].(issue.StatusChanged)
	require.Equal(t, issue.Subject{ProjectID: b.project.ID, ProjectKey: b.project.Key, IssueID: v.ID, IssueKey: v.Key, Title: "After"}, st.Subject)
	require.Equal(t, b.member.UserID, *st.By.ID)
	require.Equal(t, b.member.Email, st.By.Email)
	require.Equal(t, []any{b.todo, "To Do", b.prog, "In Progress", "IN_PROGRESS"},
		[]any{st.OldStatusID, st.OldStatusName, st.NewStatusID, st.NewStatusName, st.NewStatusCategory})
	fields := map[string]issue.FieldChanged{}
	for _, ev := range events[1:] {
		fc := ev.(issue.FieldChanged)
		fields[fc.Field] = fc
	}
	require.Equal(t, []string{"Before", "After"}, []string{fields["title"].OldValue, fields["title"].NewValue})
	require.Equal(t, []string{"MEDIUM", "HIGH", "HIGH"}, []string{fields["priority"].OldValue, fields["priority"].NewValue, fields["priority"].NewRaw})
	require.Equal(t, []string{"", "5"}, []string{fields["storyPoints"].OldValue, fields["storyPoints"].NewValue})
	a := fields["assignee"]
	require.Equal(t, []string{"", "Member", "", b.member.UserID.String()}, []string{a.OldValue, a.NewValue, a.OldRaw, a.NewRaw})

	events = nil
	require.NoError(t, svc.Delete(b.ctx, b.project, b.owner, issue.Ref{ID: v.ID}))
	require.Len(t, events, 1)
	d := events[0].(issue.Deleted)
	require.Equal(t, v.Key, d.IssueKey)
	require.Equal(t, "After", d.Title)
}

// The kept issue count follows every writer: the service, bulk SQL, deletes with their
// subtasks, and the project's own deletion.
func TestIssueCountsFollowWrites(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.PackageDB(t))
	svc := issue.NewService(b.db, bus(t, b.db, nil))
	kept := func() int {
		return b.count(t, "SELECT coalesce(max(issues), -1) FROM issue_counts WHERE project_id = $1", b.project.ID)
	}
	real := func() int { return b.count(t, "SELECT count(*) FROM issues WHERE project_id = $1", b.project.ID) }

	parent, err := svc.Create(b.ctx, b.project, b.owner, issue.NewIssue{Title: "Parent", Type: issue.TypeStory, Priority: issue.PriorityLow})
	require.NoError(t, err)
	for range 2 {
		_, err := svc.Create(b.ctx, b.project, b.owner, issue.NewIssue{Title: "Sub", Type: issue.TypeSubtask, Priority: issue.PriorityLow, ParentID: &parent.ID})
		require.NoError(t, err)
	}
	require.Equal(t, 3, kept())
	_, err = b.db.Pool.Exec(b.ctx, `INSERT INTO issues (project_id, number, key, title, status_id, reporter_id)
		SELECT $1, 100 + g, $2 || '-' || (100 + g), 'Bulk', $3, $4 FROM generate_series(1, 40) AS g`,
		b.project.ID, b.project.Key, b.todo, b.owner.UserID)
	require.NoError(t, err)
	require.Equal(t, 43, kept())
	require.NoError(t, svc.Delete(b.ctx, b.project, b.owner, issue.Ref{ID: parent.ID}))
	require.Equal(t, 40, kept())
	require.Equal(t, real(), kept())

	views, total, err := svc.List(b.ctx, b.project, issue.Filter{}, 30, 20)
	require.NoError(t, err)
	require.Len(t, views, 10)
	require.Equal(t, 40, total)

	_, err = b.db.Pool.Exec(b.ctx, "DELETE FROM projects WHERE id = $1", b.project.ID)
	require.NoError(t, err, "the project's issues and its count go by cascade")
	require.Equal(t, -1, kept())
}
