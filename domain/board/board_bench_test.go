package board_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/board"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// seed makes a project whose ACTIVE sprint holds sprint issues, a PLANNED sprint
// holding planned and backlog more in no sprint, each issue with up to two of three
// labels.
func seed(tb testing.TB, db *store.DB, sprint, planned, backlog int) issue.Project {
	tb.Helper()
	ctx := context.Background()
	p := issue.Project{ID: uuid.New(), Key: "B" + strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:7])}
	owner := uuid.New()
	_, err := db.Pool.Exec(ctx, "INSERT INTO users (id, email, display_name) VALUES ($1, $2, 'Owner')", owner, owner.String()+"@example.com")
	require.NoError(tb, err)
	_, err = db.Pool.Exec(ctx, "INSERT INTO projects (id, key, name, owner_id) VALUES ($1, $2, 'P', $3)", p.ID, p.Key, owner)
	require.NoError(tb, err)
	wf, err := workflow.CreateDefault(ctx, db.Bun, p.ID)
	require.NoError(tb, err)
	p.WorkflowID = &wf.ID
	_, err = db.Pool.Exec(ctx, `
		INSERT INTO labels (project_id, name, color) SELECT $1, 'label ' || g, '#A0B1C2' FROM generate_series(1, 3) AS g`, p.ID)
	require.NoError(tb, err)
	_, err = db.Pool.Exec(ctx, `INSERT INTO sprints (project_id, name, status, start_date, end_date, planned_points)
		VALUES ($1, 'Active', 'ACTIVE', current_date, current_date + 14, 100), ($1, 'Planned', 'PLANNED', NULL, NULL, NULL)`, p.ID)
	require.NoError(tb, err)
	_, err = db.Pool.Exec(ctx, `
		INSERT INTO issues (project_id, number, key, title, status_id, reporter_id, assignee_id, sprint_id, priority, type, story_points)
		SELECT $1, g, $2 || '-' || g, 'Issue ' || g,
			(SELECT id FROM workflow_statuses WHERE workflow_id = $3 ORDER BY position OFFSET g % 3 LIMIT 1), $4,
			CASE WHEN g % 2 = 0 THEN $4::uuid END,
			CASE WHEN g <= $5::int THEN (SELECT id FROM sprints WHERE project_id = $1 AND status = 'ACTIVE')
				WHEN g <= $5::int + $6::int THEN (SELECT id FROM sprints WHERE project_id = $1 AND status = 'PLANNED') END,
			'MEDIUM', 'TASK', g % 5
		FROM generate_series(1, $5::int + $6::int + $7::int) AS g`, p.ID, p.Key, wf.ID, owner, sprint, planned, backlog)
	require.NoError(tb, err)
	_, err = db.Pool.Exec(ctx, `INSERT INTO issue_labels (issue_id, label_id)
		SELECT i.id, l.id FROM issues AS i JOIN labels AS l ON l.project_id = i.project_id
		WHERE i.project_id = $1 AND (i.number + abs(hashtext(l.name))) % 3 <> 0`, p.ID)
	require.NoError(tb, err)
	_, err = db.Pool.Exec(ctx, "VACUUM ANALYZE issues, issue_labels")
	require.NoError(tb, err)
	return p
}

// BenchmarkBoard measures reading a 500-issue board (Head.Load, the head read once).
func BenchmarkBoard(b *testing.B) {
	db := storetest.PackageDB(b)
	p := seed(b, db, 500, 0, 0)
	ctx := context.Background()
	h, _, err := board.LoadHead(ctx, db.Pool, p, time.Now())
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		bd, err := h.Load(ctx, db.Pool, p)
		if err != nil || len(bd.Columns) != 3 {
			b.Fatalf("board: %v", err)
		}
	}
}

// BenchmarkBacklog measures reading a backlog of 200 planned and 300 unplanned issues.
func BenchmarkBacklog(b *testing.B) {
	db := storetest.PackageDB(b)
	p := seed(b, db, 0, 200, 300)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		bl, err := board.LoadBacklog(ctx, db.Pool, p)
		if err != nil || len(bl.Issues) != 300 || len(bl.Sprints) != 1 {
			b.Fatalf("backlog: %v", err)
		}
	}
}
