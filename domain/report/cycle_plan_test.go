package report

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store/storetest"
)

// activityRowsRead sums, over an EXPLAIN (ANALYZE, FORMAT JSON) plan, the rows every
// scan of issue_activities returned, times its loops.
func activityRowsRead(node map[string]any) float64 {
	var n float64
	if node["Relation Name"] == "issue_activities" {
		n += node["Actual Rows"].(float64) * node["Actual Loops"].(float64)
	}
	plans, _ := node["Plans"].([]any)
	for _, p := range plans {
		n += activityRowsRead(p.(map[string]any))
	}
	return n
}

// TestCycleTimeBySprintReadsOnlyTheSprintsIssues: in a project of 30,000 issues with
// two status changes each, the averages over its ten closed sprints of 50 issues read
// the activity of those 500 issues only (1,000 rows), not the project's 60,000.
func TestCycleTimeBySprintReadsOnlyTheSprintsIssues(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	pid, owner := uuid.New(), uuid.New()
	_, err := db.Pool.Exec(ctx, "INSERT INTO users (id, email, display_name) VALUES ($1, $2, 'Owner')", owner, owner.String()+"@example.com")
	require.NoError(t, err)
	key := "C" + strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:6])
	_, err = db.Pool.Exec(ctx, "INSERT INTO projects (id, key, name, owner_id) VALUES ($1, $2, 'P', $3)", pid, key, owner)
	require.NoError(t, err)
	wf, err := workflow.CreateDefault(ctx, db.Bun, pid)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `INSERT INTO sprints (project_id, name, status, created_at)
		SELECT $1, 'S' || g, 'CLOSED', now() - (20 - g) * interval '14 days' FROM generate_series(1, 10) AS g`, pid)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `
		INSERT INTO issues (project_id, number, key, title, status_id, reporter_id, sprint_id)
		SELECT $1, g, $2 || '-' || g, 'Issue ' || g,
			(SELECT id FROM workflow_statuses WHERE workflow_id = $3 ORDER BY position DESC LIMIT 1), $4,
			CASE WHEN g <= 500 THEN (SELECT id FROM sprints WHERE project_id = $1 AND name = 'S' || (1 + (g - 1) / 50)) END
		FROM generate_series(1, 30000) AS g`, pid, key, wf.ID, owner)
	require.NoError(t, err)
	// Each issue moves to IN_PROGRESS, then an hour later (3 hours for the sprints') to DONE.
	_, err = db.Pool.Exec(ctx, `
		INSERT INTO issue_activities (issue_id, actor_id, type, new_value, new_status_id, created_at)
		SELECT i.id, $2, 'STATUS_CHANGED', ws.name, ws.id,
			now() - interval '30 days' + CASE WHEN ws.category = 'DONE' THEN
				CASE WHEN i.sprint_id IS NULL THEN interval '1 hour' ELSE interval '3 hours' END ELSE interval '0' END
		FROM issues AS i JOIN workflow_statuses AS ws ON ws.workflow_id = $3 AND ws.category IN ('IN_PROGRESS', 'DONE')
		WHERE i.project_id = $1`, pid, owner, wf.ID)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, "ANALYZE issues, issue_activities, sprints, workflow_statuses")
	require.NoError(t, err)

	start := time.Now()
	avgs, err := CycleTimeBySprint(ctx, db.Bun, pid)
	require.NoError(t, err)
	t.Logf("cycle time of 10 sprints in a project of 30,000 issues: %s", time.Since(start))
	require.Len(t, avgs, 10)
	for i, a := range avgs {
		require.Equal(t, fmt.Sprintf("S%d", i+1), a.SprintName, "creation order")
		require.NotNil(t, a.AverageHours)
		require.InDelta(t, 3.0, *a.AverageHours, 0.001)
	}

	q := db.Bun.NewRaw(closedAveragesQuery, pid).String()
	var raw []byte
	require.NoError(t, db.Pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+q).Scan(&raw))
	var plans []map[string]any
	require.NoError(t, json.Unmarshal(raw, &plans))
	read := activityRowsRead(plans[0]["Plan"].(map[string]any))
	require.LessOrEqual(t, read, 1000.0, "activity rows read: %s", raw)
}
