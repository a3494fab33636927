package workflow_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestLoadDefaultWorkflow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	wf, err := workflow.Load(b.ctx, b.db, b.workflowID)
	require.NoError(t, err)
	require.Equal(t, "Default Workflow", wf.Name)
	require.True(t, wf.IsDefault)
	require.Equal(t, b.projectID, wf.ProjectID)
	require.Len(t, wf.Statuses, 3)
	for i, want := range []struct{ name, cat, color string }{
		{"To Do", "TODO", "#6c8fef"}, {"In Progress", "IN_PROGRESS", "#ffb432"}, {"Done", "DONE", "#63dc78"},
	} {
		s := wf.Statuses[i]
		require.Equal(t, want.name, s.Name)
		require.Equal(t, want.cat, s.Category)
		require.Equal(t, want.color, s.Color)
		require.Equal(t, i, s.Position)
	}
	require.NotNil(t, wf.Transitions)
	require.Empty(t, wf.Transitions)
	require.NotNil(t, wf.Layout)
	require.Empty(t, wf.Layout)

	_, err = workflow.Load(b.ctx, b.db, uuid.New())
	require.ErrorIs(t, err, workflow.ErrWorkflowNotFound)
}

// queryCounter counts the queries a bun.DB sends.
type queryCounter struct{ n atomic.Int64 }

func (q *queryCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}
func (q *queryCounter) AfterQuery(context.Context, *bun.QueryEvent) { q.n.Add(1) }

func TestListMakesTwoQueries(t *testing.T) {
	t.Parallel()
	b := committed(t)
	counter := &queryCounter{}
	db := bun.NewDB(storetest.PackageDB(t).SQL, pgdialect.New())
	db.AddQueryHook(counter)

	list, err := workflow.List(b.ctx, db, b.projectID)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Len(t, list[0].Statuses, 3)
	require.EqualValues(t, 2, counter.n.Load())

	// More workflows and statuses, still two queries.
	var second uuid.UUID
	require.NoError(t, b.db.NewRaw("INSERT INTO workflows (name, project_id) VALUES ('Second', ?) RETURNING id", b.projectID).Scan(b.ctx, &second))
	for i := range 5 {
		_, err := workflow.AddStatus(b.ctx, b.db, second, workflow.NewStatus{Name: "S" + string(rune('A'+i)), Category: "TODO"})
		require.NoError(t, err)
	}
	_, err = b.db.NewRaw("INSERT INTO workflows (name, project_id) VALUES ('Empty', ?)", b.projectID).Exec(b.ctx)
	require.NoError(t, err)
	counter.n.Store(0)
	list, err = workflow.List(b.ctx, db, b.projectID)
	require.NoError(t, err)
	require.EqualValues(t, 2, counter.n.Load())
	require.Len(t, list, 3)
	require.Equal(t, "Default Workflow", list[0].Name)
	require.Equal(t, "Second", list[1].Name)
	require.Len(t, list[1].Statuses, 5)
	for i, s := range list[1].Statuses {
		require.Equal(t, i, s.Position)
		require.Equal(t, second, s.WorkflowID)
	}
	require.Equal(t, "Empty", list[2].Name)
	require.NotNil(t, list[2].Statuses)
	require.Empty(t, list[2].Statuses)

	none, err := workflow.List(b.ctx, db, uuid.New())
	require.NoError(t, err)
	require.NotNil(t, none)
	require.Empty(t, none)
}

func TestAddStatusAppends(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s, err := workflow.AddStatus(b.ctx, b.db, b.workflowID, workflow.NewStatus{Name: "Review", Category: "IN_PROGRESS"})
	require.NoError(t, err)
	require.Equal(t, 3, s.Position)
	require.Equal(t, workflow.DefaultColor, s.Color)
	require.Equal(t, b.workflowID, s.WorkflowID)
	require.NotEqual(t, uuid.Nil, s.ID)

	s2, err := workflow.AddStatus(b.ctx, b.db, b.workflowID, workflow.NewStatus{Name: "Blocked", Category: "TODO", Color: "#AABBCC"})
	require.NoError(t, err)
	require.Equal(t, 4, s2.Position)
	require.Equal(t, "#AABBCC", s2.Color)

	// After a delete, max+1 (not count): positions never repeat.
	require.NoError(t, workflow.DeleteStatus(b.ctx, b.db, b.workflowID, b.prog))
	s3, err := workflow.AddStatus(b.ctx, b.db, b.workflowID, workflow.NewStatus{Name: "Later", Category: "DONE"})
	require.NoError(t, err)
	require.Equal(t, 5, s3.Position)

	_, err = workflow.AddStatus(b.ctx, b.db, uuid.New(), workflow.NewStatus{Name: "X", Category: "TODO"})
	require.ErrorIs(t, err, workflow.ErrWorkflowNotFound)
}

func TestAddStatusFirstIsZero(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var empty uuid.UUID
	require.NoError(t, b.db.NewRaw("INSERT INTO workflows (name, project_id) VALUES ('Empty', ?) RETURNING id", b.projectID).Scan(b.ctx, &empty))
	s, err := workflow.AddStatus(b.ctx, b.db, empty, workflow.NewStatus{Name: "First", Category: "TODO"})
	require.NoError(t, err)
	require.Equal(t, 0, s.Position)
}

func TestAddStatusConcurrently(t *testing.T) {
	t.Parallel()
	b := committed(t)
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := workflow.AddStatus(b.ctx, b.db, b.workflowID, workflow.NewStatus{Name: "Parallel " + string(rune('a'+i)), Category: "TODO"})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var positions []int
	require.NoError(t, b.db.NewRaw("SELECT position FROM workflow_statuses WHERE workflow_id = ? ORDER BY position", b.workflowID).Scan(b.ctx, &positions))
	want := make([]int, n+3)
	for i := range want {
		want[i] = i
	}
	require.Equal(t, want, positions, "every add got its own position")
}

func TestUpdateStatus(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s, err := workflow.UpdateStatus(b.ctx, b.db, b.workflowID, b.prog, workflow.StatusChange{Name: ptr("Doing")})
	require.NoError(t, err)
	require.Equal(t, "Doing", s.Name)
	require.Equal(t, "IN_PROGRESS", s.Category)
	require.Equal(t, "#ffb432", s.Color)
	require.Equal(t, 1, s.Position)

	s, err = workflow.UpdateStatus(b.ctx, b.db, b.workflowID, b.prog, workflow.StatusChange{Category: ptr("DONE"), Color: ptr("#000000")})
	require.NoError(t, err)
	require.Equal(t, "Doing", s.Name)
	require.Equal(t, "DONE", s.Category)
	require.Equal(t, "#000000", s.Color)

	s, err = workflow.UpdateStatus(b.ctx, b.db, b.workflowID, b.prog, workflow.StatusChange{})
	require.NoError(t, err, "an empty change reads the status")
	require.Equal(t, "Doing", s.Name)

	other := newProject(t, b.ctx, b.db)
	for _, ch := range []workflow.StatusChange{{Name: ptr("Stolen")}, {}} {
		_, err = workflow.UpdateStatus(b.ctx, b.db, b.workflowID, other.todo, ch)
		require.ErrorIs(t, err, workflow.ErrStatusNotFound)
		_, err = workflow.UpdateStatus(b.ctx, b.db, b.workflowID, uuid.New(), ch)
		require.ErrorIs(t, err, workflow.ErrStatusNotFound)
	}
	var name string
	require.NoError(t, b.db.NewRaw("SELECT name FROM workflow_statuses WHERE id = ?", other.todo).Scan(b.ctx, &name))
	require.Equal(t, "To Do", name)
}

func TestDeleteStatus(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tr := b.transition(t, &b.todo, b.prog, "")
	b.transition(t, nil, b.done, "")
	require.NoError(t, workflow.ReplaceLayout(b.ctx, b.db, b.workflowID, []workflow.Position{{StatusID: b.prog, X: 1, Y: 2}, {StatusID: b.done}}))

	require.NoError(t, workflow.DeleteStatus(b.ctx, b.db, b.workflowID, b.prog))
	wf, err := workflow.Load(b.ctx, b.db, b.workflowID)
	require.NoError(t, err)
	require.Len(t, wf.Statuses, 2)
	require.Len(t, wf.Transitions, 1, "the transition into the deleted status went with it")
	require.NotEqual(t, tr, wf.Transitions[0].ID)
	require.Equal(t, []workflow.Position{{StatusID: b.done}}, wf.Layout)

	require.ErrorIs(t, workflow.DeleteStatus(b.ctx, b.db, b.workflowID, b.prog), workflow.ErrStatusNotFound)
	other := newProject(t, b.ctx, b.db)
	require.ErrorIs(t, workflow.DeleteStatus(b.ctx, b.db, b.workflowID, other.todo), workflow.ErrStatusNotFound)
}

func TestDeleteStatusInUse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	issue := b.issue(t, b.todo)
	require.ErrorIs(t, workflow.DeleteStatus(b.ctx, b.db, b.workflowID, b.todo), workflow.ErrStatusInUse)
	var n int
	require.NoError(t, b.db.NewRaw("SELECT count(*) FROM workflow_statuses WHERE id = ?", b.todo).Scan(b.ctx, &n))
	require.Equal(t, 1, n, "the refusal rolled back to the savepoint; the transaction goes on")

	_, err := b.db.NewRaw("UPDATE issues SET status_id = ? WHERE id = ?", b.done, issue).Exec(b.ctx)
	require.NoError(t, err)
	require.NoError(t, workflow.DeleteStatus(b.ctx, b.db, b.workflowID, b.todo))
}

func TestTransitions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tr, err := workflow.AddTransition(b.ctx, b.db, b.workflowID, &b.todo, b.prog)
	require.NoError(t, err)
	require.Equal(t, b.todo, *tr.FromStatusID)
	require.Equal(t, b.prog, tr.ToStatusID)
	require.Nil(t, tr.Guards)
	anyTr, err := workflow.AddTransition(b.ctx, b.db, b.workflowID, nil, b.done)
	require.NoError(t, err)
	require.Nil(t, anyTr.FromStatusID)
	self, err := workflow.AddTransition(b.ctx, b.db, b.workflowID, &b.done, b.done)
	require.NoError(t, err, "a status may lead to itself")

	other := newProject(t, b.ctx, b.db)
	for _, c := range []struct {
		from *uuid.UUID
		to   uuid.UUID
	}{{&other.todo, b.prog}, {&b.todo, other.prog}, {nil, other.done}, {ptr(uuid.New()), b.prog}, {nil, uuid.New()}} {
		_, err = workflow.AddTransition(b.ctx, b.db, b.workflowID, c.from, c.to)
		require.ErrorIs(t, err, workflow.ErrStatusNotFound)
	}

	guards := []workflow.Guard{
		{Type: workflow.GuardRequiredField, Field: "assigneeId"},
		{Type: workflow.GuardRoleRestriction, Roles: []string{"ADMIN", "NONE"}},
		{Type: workflow.GuardRoleRestriction},
	}
	got, err := workflow.SetGuards(b.ctx, b.db, b.workflowID, tr.ID, guards)
	require.NoError(t, err)
	require.JSONEq(t, `[{"type":"REQUIRED_FIELD","field":"assigneeId"},{"type":"ROLE_RESTRICTION","roles":["ADMIN","NONE"]},{"type":"ROLE_RESTRICTION","roles":[]}]`, string(got.Guards))
	require.Equal(t, tr.ID, got.ID)
	require.Equal(t, b.todo, *got.FromStatusID)

	got, err = workflow.SetGuards(b.ctx, b.db, b.workflowID, tr.ID, nil)
	require.NoError(t, err)
	require.Nil(t, got.Guards, "no guards is NULL")

	_, err = workflow.SetGuards(b.ctx, b.db, b.workflowID, uuid.New(), guards)
	require.ErrorIs(t, err, workflow.ErrTransitionNotFound)
	otherTr := other.transition(t, nil, other.done, "")
	_, err = workflow.SetGuards(b.ctx, b.db, b.workflowID, otherTr, guards)
	require.ErrorIs(t, err, workflow.ErrTransitionNotFound)
	_, err = workflow.SetGuards(b.ctx, b.db, b.workflowID, tr.ID, []workflow.Guard{{Type: "SOMETHING"}})
	require.Error(t, err)

	require.ErrorIs(t, workflow.DeleteTransition(b.ctx, b.db, b.workflowID, otherTr), workflow.ErrTransitionNotFound)
	require.NoError(t, workflow.DeleteTransition(b.ctx, b.db, b.workflowID, tr.ID))
	require.ErrorIs(t, workflow.DeleteTransition(b.ctx, b.db, b.workflowID, tr.ID), workflow.ErrTransitionNotFound)
	wf, err := workflow.Load(b.ctx, b.db, b.workflowID)
	require.NoError(t, err)
	require.Len(t, wf.Transitions, 2)
	// created_at is now(), equal inside this one transaction, so compare as a set.
	require.ElementsMatch(t, []uuid.UUID{anyTr.ID, self.ID}, []uuid.UUID{wf.Transitions[0].ID, wf.Transitions[1].ID})
}

func TestSetGuardsFeedsTheRule(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tr, err := workflow.AddTransition(b.ctx, b.db, b.workflowID, &b.todo, b.prog)
	require.NoError(t, err)
	_, err = workflow.SetGuards(b.ctx, b.db, b.workflowID, tr.ID, []workflow.Guard{{Type: workflow.GuardRoleRestriction, Roles: []string{"ADMIN"}}})
	require.NoError(t, err)
	var g *workflow.GuardError
	require.ErrorAs(t, workflow.CheckStatusChange(b.ctx, b.db, &b.workflowID, b.todo, b.prog, full(), "MEMBER"), &g)
	require.Equal(t, "MEMBER", g.Role)
	require.NoError(t, workflow.CheckStatusChange(b.ctx, b.db, &b.workflowID, b.todo, b.prog, full(), "ADMIN"))
}

func TestReplaceLayout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, workflow.ReplaceLayout(b.ctx, b.db, b.workflowID, []workflow.Position{
		{StatusID: b.done, X: 300, Y: 10}, {StatusID: b.todo, X: -5, Y: 0}, {StatusID: b.done, X: 400, Y: 20},
	}))
	wf, err := workflow.Load(b.ctx, b.db, b.workflowID)
	require.NoError(t, err)
	require.Equal(t, []workflow.Position{{StatusID: b.todo, X: -5}, {StatusID: b.done, X: 400, Y: 20}}, wf.Layout,
		"ordered by status position; a status named twice keeps its last entry")

	require.NoError(t, workflow.ReplaceLayout(b.ctx, b.db, b.workflowID, []workflow.Position{{StatusID: b.prog, X: 1, Y: 1}}))
	wf, err = workflow.Load(b.ctx, b.db, b.workflowID)
	require.NoError(t, err)
	require.Equal(t, []workflow.Position{{StatusID: b.prog, X: 1, Y: 1}}, wf.Layout, "omitted statuses lose their position")

	other := newProject(t, b.ctx, b.db)
	require.ErrorIs(t, workflow.ReplaceLayout(b.ctx, b.db, b.workflowID, []workflow.Position{{StatusID: b.todo}, {StatusID: other.todo}}), workflow.ErrStatusNotFound)
	wf, err = workflow.Load(b.ctx, b.db, b.workflowID)
	require.NoError(t, err)
	require.Equal(t, []workflow.Position{{StatusID: b.prog, X: 1, Y: 1}}, wf.Layout, "a refused layout changes nothing")

	require.NoError(t, workflow.ReplaceLayout(b.ctx, b.db, b.workflowID, nil))
	wf, err = workflow.Load(b.ctx, b.db, b.workflowID)
	require.NoError(t, err)
	require.Empty(t, wf.Layout)
	require.ErrorIs(t, workflow.ReplaceLayout(b.ctx, b.db, uuid.New(), nil), workflow.ErrWorkflowNotFound)
}

func TestReplaceLayoutConcurrently(t *testing.T) {
	t.Parallel()
	b := committed(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			errs <- workflow.ReplaceLayout(b.ctx, b.db, b.workflowID, []workflow.Position{
				{StatusID: b.todo, X: i}, {StatusID: b.prog, X: i}, {StatusID: b.done, X: i}})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	wf, err := workflow.Load(b.ctx, b.db, b.workflowID)
	require.NoError(t, err)
	require.Len(t, wf.Layout, 3)
	require.Equal(t, wf.Layout[0].X, wf.Layout[2].X, "one replacement won whole")
}

func TestGuardVocabulary(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"title", "description", "assigneeId", "storyPoints", "dueDate"} {
		require.True(t, workflow.IsGuardField(f), f)
	}
	for _, f := range []string{"", "Title", "assignee", "status", "labels"} {
		require.False(t, workflow.IsGuardField(f), f)
	}
	for _, r := range []string{"ADMIN", "MEMBER", "VIEWER", "NONE"} {
		require.True(t, workflow.IsGuardRole(r), r)
	}
	for _, r := range []string{"", "admin", "OWNER"} {
		require.False(t, workflow.IsGuardRole(r), r)
	}
	require.True(t, workflow.IsGuardType("REQUIRED_FIELD"))
	require.True(t, workflow.IsGuardType("ROLE_RESTRICTION"))
	require.False(t, workflow.IsGuardType("required_field"))
	for _, c := range []string{"#6c8fef", "#ABCDEF", "#000000"} {
		require.True(t, workflow.IsColor(c), c)
	}
	for _, c := range []string{"", "6c8fef", "#6c8fe", "#6c8fefa", "#ggggggg", "#GGGGGG", " #6c8fef"} {
		require.False(t, workflow.IsColor(c), c)
	}
	for _, c := range workflow.Categories {
		require.True(t, workflow.IsCategory(c))
	}
	require.False(t, workflow.IsCategory("todo"))
	raw, err := workflow.EncodeGuards([]workflow.Guard{})
	require.NoError(t, err)
	require.Nil(t, raw)
}
