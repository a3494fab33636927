package report_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// reportSprint inserts a sprint of the project in SQL, so report tests do not depend on
// the sprint endpoints. start and end are "YYYY-MM-DD" or "" for none; planned < 0 is
// null.
func reportSprint(t *testing.T, h *apitest.Harness, projectID uuid.UUID, status, start, end string, planned int) string {
	t.Helper()
	var p *int
	if planned >= 0 {
		p = &planned
	}
	var id uuid.UUID
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `INSERT INTO sprints (project_id, name, status, start_date, end_date, planned_points)
		VALUES ($1, $2, $3, nullif($4, '')::date, nullif($5, '')::date, $6) RETURNING id`,
		projectID, "Sprint "+status, status, start, end, p).Scan(&id))
	return id.String()
}

// reportClose marks a sprint CLOSED in SQL, after its issues were added through the API
// (which refuses CLOSED sprints).
func reportClose(t *testing.T, h *apitest.Harness, sprintID string) {
	t.Helper()
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE sprints SET status = 'CLOSED' WHERE id = $1", sprintID)
	require.NoError(t, err)
}

// reportDay is a date relative to today (UTC), as YYYY-MM-DD.
func reportDay(offset int) string {
	return time.Now().UTC().AddDate(0, 0, offset).Format(time.DateOnly)
}

// reportGet GETs a report path as token and expects 200.
func reportGet(t *testing.T, f *apitest.Project, path, token string) map[string]any {
	t.Helper()
	r := f.H.Do("GET", f.Path(path), nil, token)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.JSON(t)
}

func TestReportBurndownAPI(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	// Four days long, five dates: two before today, today, two after.
	s := reportSprint(t, f.H, f.ProjectID, "ACTIVE", reportDay(-2), reportDay(2), 8)
	done := f.Create(t, map[string]any{"title": "Done today", "storyPoints": 3, "sprintId": s})
	f.Create(t, map[string]any{"title": "Open", "storyPoints": 5, "sprintId": s})
	f.Create(t, map[string]any{"title": "No points", "sprintId": s})
	f.Create(t, map[string]any{"title": "Backlog", "storyPoints": 40})
	f.Patch(t, done["key"].(string), map[string]any{"statusId": f.Done})

	m := reportGet(t, f, "/reports/burndown?sprintId="+s, f.Viewer.Access)
	require.Equal(t, s, m["sprintId"])
	require.Len(t, m, 2, "exactly sprintId and days: %v", m)
	want := []any{}
	ideal := []float64{8, 6, 4, 2, 0}
	// Done today: still remaining at the end of the two earlier dates, gone from today.
	remaining := []float64{8, 8, 5, 5, 5}
	for i := range 5 {
		want = append(want, map[string]any{"date": reportDay(i - 2), "idealPoints": ideal[i], "remainingPoints": remaining[i]})
	}
	require.Equal(t, want, m["days"])

	noStart := reportSprint(t, f.H, f.ProjectID, "PLANNED", "", "", -1)
	require.Equal(t, []any{}, reportGet(t, f, "/reports/burndown?sprintId="+noStart, f.Member.Access)["days"])
}

func TestReportErrors(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	other := apitest.NewProject(t, f.H)
	foreign := reportSprint(t, f.H, other.ProjectID, "CLOSED", reportDay(-10), reportDay(-1), 5)
	for _, report := range []string{"burndown", "cycle-time"} {
		p := "/reports/" + report + "?sprintId="
		apitest.RequireProblem(t, f.H.Do("GET", f.Path(p+foreign), nil, f.Owner.Access), 403, "FORBIDDEN", apitest.Reason("SPRINT_NOT_IN_PROJECT"))
		apitest.RequireProblem(t, f.H.Do("GET", f.Path(p+uuid.NewString()), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("SPRINT_NOT_FOUND"))
		apitest.RequireProblem(t, f.H.Do("GET", f.Path(p+"nope"), nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
		apitest.RequireProblem(t, f.H.Do("GET", f.Path(p+"{"+uuid.NewString()+"}"), nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	}
	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/reports/burndown"), nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))
	for _, p := range []string{"/reports/burndown?sprintId=" + foreign, "/reports/velocity", "/reports/cycle-time"} {
		apitest.RequireProblem(t, f.H.Do("GET", f.Path(p), nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
		apitest.RequireProblem(t, f.H.Do("GET", "/api/v1/projects/NOPE0"+p, nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
	}
}

func TestReportVelocityAPI(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	require.Equal(t, map[string]any{"entries": []any{}}, reportGet(t, f, "/reports/velocity", f.Viewer.Access))
	first := reportSprint(t, f.H, f.ProjectID, "CLOSED", "", "", 13)
	_, err := f.H.DB.Pool.Exec(context.Background(), "UPDATE sprints SET completed_points = 11 WHERE id = $1", first)
	require.NoError(t, err)
	reportSprint(t, f.H, f.ProjectID, "ACTIVE", "", "", 3)
	second := reportSprint(t, f.H, f.ProjectID, "CLOSED", "", "", -1)
	require.Equal(t, map[string]any{"entries": []any{
		map[string]any{"sprintId": first, "sprintName": "Sprint CLOSED", "plannedPoints": 13.0, "completedPoints": 11.0},
		map[string]any{"sprintId": second, "sprintName": "Sprint CLOSED", "plannedPoints": 0.0, "completedPoints": 0.0},
	}}, reportGet(t, f, "/reports/velocity", f.Viewer.Access))
}

// TestReportCycleTimeAPI moves issues through the issue API, so the activity rows are the
// ones the service writes (with status ids), then backdates them to known moments.
func TestReportCycleTimeAPI(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	ctx := context.Background()
	s := reportSprint(t, f.H, f.ProjectID, "PLANNED", "", "", -1)
	empty := reportSprint(t, f.H, f.ProjectID, "CLOSED", "", "", -1)
	moved := f.Create(t, map[string]any{"title": "Moved", "sprintId": s})
	skipped := f.Create(t, map[string]any{"title": "Straight to done", "sprintId": s})
	f.Patch(t, moved["key"].(string), map[string]any{"statusId": f.Prog})
	f.Patch(t, moved["key"].(string), map[string]any{"statusId": f.Done})
	f.Patch(t, skipped["key"].(string), map[string]any{"statusId": f.Done})
	reportClose(t, f.H, s)
	require.Equal(t, 3, f.H.Count(`SELECT count(*) FROM issue_activities AS a JOIN issues AS i ON i.id = a.issue_id
		WHERE i.sprint_id = $1 AND a.type = 'STATUS_CHANGED' AND a.new_status_id IS NOT NULL`, s),
		"status changes store the target status id")
	t0 := time.Date(2026, 2, 2, 8, 0, 0, 0, time.UTC)
	_, err := f.H.DB.Pool.Exec(ctx, `UPDATE issue_activities SET created_at = CASE new_status_id WHEN $2 THEN $3::timestamptz ELSE $4::timestamptz END
		WHERE issue_id = $1 AND type = 'STATUS_CHANGED'`, moved["id"], f.Prog, t0, t0.Add(135*time.Minute))
	require.NoError(t, err)

	m := reportGet(t, f, "/reports/cycle-time?sprintId="+s, f.Viewer.Access)
	require.Equal(t, map[string]any{"sprintId": s, "averageCycleTimeHours": 2.25, "issues": []any{
		map[string]any{"issueId": moved["id"], "issueKey": moved["key"], "cycleTimeHours": 2.25},
		map[string]any{"issueId": skipped["id"], "issueKey": skipped["key"], "cycleTimeHours": nil},
	}}, m)

	// Rule 4: an empty sprint gives an empty list, and the average is null, not absent.
	require.Equal(t, map[string]any{"sprintId": empty, "issues": []any{}, "averageCycleTimeHours": nil},
		reportGet(t, f, "/reports/cycle-time?sprintId="+empty, f.Viewer.Access))

	require.Equal(t, map[string]any{"sprints": []any{
		map[string]any{"sprintId": s, "sprintName": "Sprint PLANNED", "averageCycleTimeHours": 2.25},
		map[string]any{"sprintId": empty, "sprintName": "Sprint CLOSED", "averageCycleTimeHours": nil},
	}}, reportGet(t, f, "/reports/cycle-time", f.Viewer.Access))
}

// TestReportViewedAudit records REPORT_VIEWED only while the ALL level is on (a fresh
// database: the toggle is global).
func TestReportViewedAudit(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	s := reportSprint(t, h, f.ProjectID, "ACTIVE", reportDay(0), "", -1)
	jobs := func() int {
		return h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'REPORT_VIEWED'
			AND args->>'projectId' = $1`, f.ProjectID.String())
	}
	paths := []string{"/reports/burndown?sprintId=" + s, "/reports/velocity", "/reports/cycle-time", "/reports/cycle-time?sprintId=" + s}
	for _, p := range paths {
		reportGet(t, f, p, f.Viewer.Access)
	}
	require.Zero(t, jobs(), "ALL is off by default")

	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE audit_config SET enabled = true WHERE level = 'ALL'")
	require.NoError(t, err)
	for _, p := range paths {
		reportGet(t, f, p, f.Viewer.Access)
	}
	require.Equal(t, len(paths), jobs())
	f.H.Do("GET", f.Path("/reports/burndown?sprintId="+uuid.NewString()), nil, f.Viewer.Access)
	require.Equal(t, len(paths), jobs(), "a failed report records nothing")

	h.StartWorkers()
	apitest.Eventually(t, 10*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM audit_events WHERE action = 'REPORT_VIEWED' AND project_id = $1", f.ProjectID) == len(paths)
	}, "REPORT_VIEWED rows written")
	require.Equal(t, 2, h.Count(`SELECT count(*) FROM audit_events WHERE action = 'REPORT_VIEWED' AND project_id = $1
		AND level = 'ALL' AND user_id = $2 AND resource_type = 'SPRINT' AND resource_id = $3`, f.ProjectID, f.Viewer.ID, s))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM audit_events WHERE action = 'REPORT_VIEWED' AND project_id = $1
		AND resource_type = 'PROJECT' AND details::jsonb->>'report' = 'velocity'`, f.ProjectID))
}

// TestReportQueryCount proves each report makes the same number of queries for a sprint
// of 1 issue and of 30 issues with activity.
func TestReportQueryCount(t *testing.T) {
	t.Parallel()
	h, counter := apitest.CountingHarness(t)
	f := apitest.NewProject(t, h)
	s := reportSprint(t, h, f.ProjectID, "PLANNED", reportDay(-5), reportDay(5), -1)
	reportSprint(t, h, f.ProjectID, "CLOSED", reportDay(-20), reportDay(-10), 4)

	paths := []string{"/reports/burndown?sprintId=" + s, "/reports/velocity", "/reports/cycle-time?sprintId=" + s, "/reports/cycle-time"}
	count := func() []int64 {
		out := make([]int64, len(paths))
		for i, p := range paths {
			before := counter.N.Load()
			reportGet(t, f, p, f.Member.Access)
			out[i] = counter.N.Load() - before
		}
		return out
	}
	add := func(i int) {
		is := f.Create(t, map[string]any{"title": fmt.Sprintf("Issue %d", i), "storyPoints": i % 5, "sprintId": s})
		f.Patch(t, is["key"].(string), map[string]any{"statusId": f.Prog})
		f.Patch(t, is["key"].(string), map[string]any{"statusId": f.Done})
	}
	add(0)
	reportClose(t, h, s)
	one := count()
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE sprints SET status = 'PLANNED' WHERE id = $1", s)
	require.NoError(t, err)
	for i := 1; i < 30; i++ {
		add(i)
	}
	reportClose(t, h, s)
	thirty := count()
	require.Equal(t, one, thirty, "queries per report for 1 issue and for 30")
	// Credential check, project access, BEGIN, sprint check, the report, audit toggle, COMMIT.
	require.Equal(t, int64(7), one[0])
	require.Len(t, reportGet(t, f, "/reports/cycle-time?sprintId="+s, f.Member.Access)["issues"], 30)
}
