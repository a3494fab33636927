package workflow_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// bundle is one test's project with its default workflow.
type bundle struct {
	ctx        context.Context
	db         bun.IDB
	userID     uuid.UUID
	projectID  uuid.UUID
	workflowID uuid.UUID
	// todo, prog and done are the default statuses.
	todo, prog, done uuid.UUID
}

// setup gives a test a project with the default workflow inside a transaction that
// rolls back when the test ends.
func setup(t *testing.T) *bundle {
	t.Helper()
	ctx := context.Background()
	tx, err := storetest.PackageDB(t).Bun.BeginTx(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	return newProject(t, ctx, tx)
}

// committed gives a project whose rows commit, for tests of concurrent edits; rows of
// different tests never meet, since each has its own project.
func committed(t *testing.T) *bundle {
	t.Helper()
	return newProject(t, context.Background(), storetest.PackageDB(t).Bun)
}

func newProject(t *testing.T, ctx context.Context, db bun.IDB) *bundle {
	t.Helper()
	b := &bundle{ctx: ctx, db: db}
	tag := strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:8])
	require.NoError(t, db.NewRaw("INSERT INTO users (email, display_name) VALUES (?, ?) RETURNING id",
		"wf-"+strings.ToLower(tag)+"@example.com", "Owner "+tag).Scan(ctx, &b.userID))
	require.NoError(t, db.NewRaw("INSERT INTO projects (key, name, owner_id) VALUES (?, ?, ?) RETURNING id",
		"W"+tag, "Project "+tag, b.userID).Scan(ctx, &b.projectID))
	wf, err := workflow.CreateDefault(ctx, db, b.projectID)
	require.NoError(t, err)
	b.workflowID = wf.ID
	var ss []store.WorkflowStatus
	require.NoError(t, db.NewSelect().Model(&ss).Where("workflow_id = ?", wf.ID).Order("position").Scan(ctx))
	require.Len(t, ss, 3)
	b.todo, b.prog, b.done = ss[0].ID, ss[1].ID, ss[2].ID
	return b
}

// transition inserts a transition row directly; from nil = from any, guards "" = NULL.
func (b *bundle) transition(t *testing.T, from *uuid.UUID, to uuid.UUID, guards string) uuid.UUID {
	t.Helper()
	var g any
	if guards != "" {
		g = guards
	}
	var id uuid.UUID
	require.NoError(t, b.db.NewRaw(
		"INSERT INTO workflow_transitions (workflow_id, from_status_id, to_status_id, guards) VALUES (?, ?, ?, ?::jsonb) RETURNING id",
		b.workflowID, from, to, g).Scan(b.ctx, &id))
	return id
}

// issue inserts an issue in status, as the issue code would.
func (b *bundle) issue(t *testing.T, status uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, b.db.NewRaw(`
		WITH n AS (UPDATE projects SET issue_seq = issue_seq + 1 WHERE id = ? RETURNING key, issue_seq)
		INSERT INTO issues (project_id, number, key, title, status_id, reporter_id)
		SELECT ?, n.issue_seq, n.key || '-' || n.issue_seq, 'An issue', ?, ? FROM n RETURNING id`,
		b.projectID, b.projectID, status, b.userID).Scan(b.ctx, &id))
	return id
}

func ptr[T any](v T) *T { return &v }
