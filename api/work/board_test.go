package work_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/samber/lo"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// boardKeys returns the issue keys of each board column, in column order.
func boardKeys(t *testing.T, m map[string]any) [][]string {
	t.Helper()
	var out [][]string
	for _, c := range m["columns"].([]any) {
		keys := []string{}
		for _, i := range c.(map[string]any)["issues"].([]any) {
			apitest.RequireIssueShape(t, i.(map[string]any))
			keys = append(keys, i.(map[string]any)["key"].(string))
		}
		out = append(out, keys)
	}
	return out
}

func TestBoardShapeAndLivePoints(t *testing.T) {
	t.Parallel()
	f := apitest.NewSprintProject(t, apitest.Shared(t))
	r := f.H.Do("GET", f.Path("/board"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "no ACTIVE sprint: %s", r.Body)
	require.Empty(t, r.Body)
	planned := f.NewSprint(t, map[string]any{"name": "later"})["id"].(string)
	r = f.H.Do("GET", f.Path("/board"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "a PLANNED sprint is not on the board")

	end := time.Now().UTC().AddDate(0, 0, 5).Format(time.DateOnly)
	sp := f.NewSprint(t, map[string]any{"name": "Now", "goal": "Board", "endDate": end})["id"].(string)
	l := f.Label(t, "ui")
	a := f.Create(t, map[string]any{"title": "a", "storyPoints": 3, "sprintId": sp, "labelIds": []string{l}})
	b := f.Create(t, map[string]any{"title": "b", "storyPoints": 5, "sprintId": sp})
	c := f.Create(t, map[string]any{"title": "c", "sprintId": sp})
	f.Create(t, map[string]any{"title": "backlog", "storyPoints": 8})
	f.Create(t, map[string]any{"title": "planned", "storyPoints": 8, "sprintId": planned})
	f.Patch(t, b["id"].(string), map[string]any{"statusId": f.Done})
	f.Patch(t, c["id"].(string), map[string]any{"statusId": f.Prog})
	f.Start(t, sp)

	r = f.H.Do("GET", f.Path("/board"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.ElementsMatch(t, []string{"sprint", "columns"}, lo.Keys(m))
	s := m["sprint"].(map[string]any)
	require.ElementsMatch(t, []string{"id", "name", "goal", "startDate", "endDate", "daysRemaining", "totalPoints",
		"completedPoints"}, lo.Keys(s))
	require.Equal(t, sp, s["id"])
	require.Equal(t, "Now", s["name"])
	require.Equal(t, "Board", s["goal"])
	require.Equal(t, time.Now().UTC().Format(time.DateOnly), s["startDate"])
	require.Equal(t, end, s["endDate"])
	require.EqualValues(t, 5, s["daysRemaining"])
	require.EqualValues(t, 8, s["totalPoints"], "plannedPoints snapshot 3 + 5 + null")
	require.EqualValues(t, 5, s["completedPoints"], "b is DONE")

	cols := m["columns"].([]any)
	require.Len(t, cols, 3)
	for i, want := range []struct{ id, name, category, color string }{
		{f.Todo.String(), "To Do", "TODO", "#6c8fef"}, {f.Prog.String(), "In Progress", "IN_PROGRESS", "#ffb432"},
		{f.Done.String(), "Done", "DONE", "#63dc78"},
	} {
		st := cols[i].(map[string]any)["status"].(map[string]any)
		require.ElementsMatch(t, []string{"id", "name", "category", "color"}, lo.Keys(st))
		require.Equal(t, want.id, st["id"])
		require.Equal(t, want.name, st["name"])
		require.Equal(t, want.category, st["category"])
		require.Equal(t, want.color, st["color"])
	}
	require.Equal(t, [][]string{{a["key"].(string)}, {c["key"].(string)}, {b["key"].(string)}}, boardKeys(t, m))
	first := cols[0].(map[string]any)["issues"].([]any)[0].(map[string]any)
	require.Len(t, first["labels"], 1)
	require.Equal(t, "ui", first["labels"].([]any)[0].(map[string]any)["name"])
	require.Equal(t, "Now", first["sprintName"])

	// completedPoints is live: a move to DONE and a points change count at once; the
	// snapshot stays.
	f.Patch(t, a["id"].(string), map[string]any{"statusId": f.Done, "storyPoints": 4})
	s = f.H.Do("GET", f.Path("/board"), nil, f.Member.Access).JSON(t)["sprint"].(map[string]any)
	require.EqualValues(t, 9, s["completedPoints"])
	require.EqualValues(t, 8, s["totalPoints"])

	// Outsiders cannot read it.
	r = f.H.Do("GET", f.Path("/board"), nil, f.Outsider.Access)
	require.Equal(t, http.StatusForbidden, r.Status)
}

func TestBoardDaysRemaining(t *testing.T) {
	t.Parallel()
	today := time.Now().UTC()
	for _, tc := range []struct {
		body map[string]any
		want any
	}{
		{map[string]any{"name": "no end"}, nil},
		{map[string]any{"name": "ends today", "endDate": today.Format(time.DateOnly)}, 0.0},
		{map[string]any{"name": "ended", "startDate": today.AddDate(0, 0, -20).Format(time.DateOnly),
			"endDate": today.AddDate(0, 0, -3).Format(time.DateOnly)}, 0.0},
		{map[string]any{"name": "tomorrow", "endDate": today.AddDate(0, 0, 1).Format(time.DateOnly)}, 1.0},
		{map[string]any{"name": "two weeks", "endDate": today.AddDate(0, 0, 14).Format(time.DateOnly)}, 14.0},
	} {
		f := apitest.NewSprintProject(t, apitest.Shared(t))
		f.Start(t, f.NewSprint(t, tc.body)["id"].(string))
		r := f.H.Do("GET", f.Path("/board"), nil, f.Member.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		s := r.JSON(t)["sprint"].(map[string]any)
		require.Equal(t, tc.want, s["daysRemaining"], tc.body["name"])
		require.Equal(t, [][]string{{}, {}, {}}, boardKeys(t, r.JSON(t)))
	}
}

func TestBoardMoveIsAStatusPatch(t *testing.T) {
	t.Parallel()
	f := apitest.NewSprintProject(t, apitest.Shared(t))
	sp := f.NewSprint(t, map[string]any{"name": "S"})["id"].(string)
	a := f.Create(t, map[string]any{"title": "a", "sprintId": sp})
	b := f.Create(t, map[string]any{"title": "b", "sprintId": sp})
	f.Start(t, sp)

	r := f.H.Do("PATCH", f.Path("/board/move"), map[string]any{"issueId": a["id"], "newStatusId": f.Prog}, f.Member.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	got := f.Get(t, a["key"].(string))
	require.Equal(t, f.Prog.String(), got["statusId"])
	require.NotNil(t, got["slaStartTime"], "IN_PROGRESS starts the SLA timer, as PATCH does")
	require.Equal(t, []string{"STATUS_CHANGED:To Do→In Progress"}, f.Activity(t, a["id"].(string)))

	// Only To Do → In Progress is allowed from now on: the move and the PATCH refuse the
	// same transition with the same reply.
	w := f.H.Do("POST", f.Path("/workflow/transitions"), map[string]any{"fromStatusId": f.Todo, "toStatusId": f.Prog}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, w.Status, "%s", w.Body)
	move := f.H.Do("PATCH", f.Path("/board/move"), map[string]any{"issueId": b["id"], "newStatusId": f.Done}, f.Member.Access)
	patch := f.H.Do("PATCH", f.Path("/issues/"+b["id"].(string)), map[string]any{"statusId": f.Done}, f.Member.Access)
	require.Equal(t, http.StatusBadRequest, move.Status, "%s", move.Body)
	require.Equal(t, patch.Status, move.Status)
	require.Equal(t, patch.JSON(t)["reason"], move.JSON(t)["reason"])
	require.Equal(t, patch.JSON(t)["code"], move.JSON(t)["code"])
	require.Equal(t, f.Todo.String(), f.Get(t, b["key"].(string))["statusId"])
	require.Empty(t, f.Activity(t, b["id"].(string)))

	// Bad input and roles.
	for _, tc := range []struct {
		body   any
		status int
		reason string
	}{
		{map[string]any{"newStatusId": f.Prog}, 400, "MISSING_FIELD"},
		{map[string]any{"issueId": b["id"]}, 400, "MISSING_FIELD"},
		{map[string]any{"issueId": "??", "newStatusId": f.Prog}, 400, "INVALID_ISSUE_REF"},
		{map[string]any{"issueId": b["id"], "newStatusId": "x"}, 400, "INVALID_UUID"},
		{"[]", 400, "MALFORMED_JSON"},
		{map[string]any{"issueId": f.Key + "-999", "newStatusId": f.Prog}, 404, "ISSUE_NOT_FOUND"},
	} {
		r := f.H.Do("PATCH", f.Path("/board/move"), tc.body, f.Member.Access)
		require.Equal(t, tc.status, r.Status, "%v: %s", tc.body, r.Body)
		require.Equal(t, tc.reason, r.JSON(t)["reason"])
	}
	r = f.H.Do("PATCH", f.Path("/board/move"), map[string]any{"issueId": b["id"], "newStatusId": f.Prog}, f.Viewer.Access)
	require.Equal(t, http.StatusForbidden, r.Status)
	require.Equal(t, f.Todo.String(), f.Get(t, b["key"].(string))["statusId"])
}

func TestBacklog(t *testing.T) {
	t.Parallel()
	f := apitest.NewSprintProject(t, apitest.Shared(t))
	r := f.H.Do("GET", f.Path("/backlog"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, map[string]any{"sprints": []any{}, "backlogIssues": []any{}}, r.JSON(t))

	p1 := f.NewSprint(t, map[string]any{"name": "P1"})["id"].(string)
	active := f.NewSprint(t, map[string]any{"name": "active"})["id"].(string)
	p2 := f.NewSprint(t, map[string]any{"name": "P2"})["id"].(string)
	x := f.Create(t, map[string]any{"title": "x", "storyPoints": 2, "sprintId": p1})
	y := f.Create(t, map[string]any{"title": "y", "sprintId": p1})
	z := f.Create(t, map[string]any{"title": "z", "storyPoints": 13, "sprintId": p1})
	f.Create(t, map[string]any{"title": "on the board", "storyPoints": 1, "sprintId": active})
	free1 := f.Create(t, map[string]any{"title": "free", "labelIds": []string{f.Label(t, "l")}})
	free2 := f.Create(t, map[string]any{"title": "free too"})
	f.Start(t, active)

	r = f.H.Do("GET", f.Path("/backlog"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.ElementsMatch(t, []string{"sprints", "backlogIssues"}, lo.Keys(m))
	sprints := m["sprints"].([]any)
	require.Len(t, sprints, 2, "PLANNED sprints only")
	keys := func(list []any) []string {
		out := []string{}
		for _, i := range list {
			apitest.RequireIssueShape(t, i.(map[string]any))
			out = append(out, i.(map[string]any)["key"].(string))
		}
		return out
	}
	s1, s2 := sprints[0].(map[string]any), sprints[1].(map[string]any)
	require.ElementsMatch(t, []string{"sprint", "issues", "totalPoints"}, lo.Keys(s1))
	require.Equal(t, p1, s1["sprint"].(map[string]any)["id"])
	require.Equal(t, "PLANNED", s1["sprint"].(map[string]any)["status"])
	require.Equal(t, []string{x["key"].(string), y["key"].(string), z["key"].(string)}, keys(s1["issues"].([]any)))
	require.EqualValues(t, 15, s1["totalPoints"], "2 + null + 13")
	require.Equal(t, p2, s2["sprint"].(map[string]any)["id"])
	require.Equal(t, []string{}, keys(s2["issues"].([]any)))
	require.EqualValues(t, 0, s2["totalPoints"])
	backlog := m["backlogIssues"].([]any)
	require.Equal(t, []string{free1["key"].(string), free2["key"].(string)}, keys(backlog))
	require.Len(t, backlog[0].(map[string]any)["labels"], 1)

	r = f.H.Do("GET", f.Path("/backlog"), nil, f.Outsider.Access)
	require.Equal(t, http.StatusForbidden, r.Status)
}

// TestBoardAndBacklogQueryCount proves the board and the backlog make the same number
// of statements for 1 issue and for 60 with labels and assignees: no query per issue.
// Each read here changed the board, so it is built (an unchanged one costs only the
// first statement: TestBoardPollStatements).
func TestBoardAndBacklogQueryCount(t *testing.T) {
	t.Parallel()
	h, counter := apitest.CountingHarness(t)
	f := apitest.NewSprintProject(t, h)
	active := f.NewSprint(t, map[string]any{"name": "A"})["id"].(string)
	planned := f.NewSprint(t, map[string]any{"name": "P"})["id"].(string)
	labels := []string{f.Label(t, "a"), f.Label(t, "b")}
	f.Start(t, active)

	count := func(path string) int64 {
		before := counter.N.Load()
		r := h.Do("GET", f.Path(path), nil, f.Member.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return counter.N.Load() - before
	}
	create := func(i int) {
		sprint := []any{active, planned, nil}[i%3]
		f.Create(t, map[string]any{"title": "Issue " + strconv.Itoa(i), "assigneeId": []any{f.Member.ID, f.Owner.ID}[i%2],
			"sprintId": sprint, "labelIds": labels[:i%2+1], "storyPoints": i})
	}
	create(0)
	boardOne, backlogOne := count("/board"), count("/backlog")
	for i := 1; i < 60; i++ {
		create(i)
	}
	boardMany, backlogMany := count("/board"), count("/backlog")
	require.Equal(t, boardOne, boardMany, "board queries for 1 issue: %d, for 20: %d", boardOne, boardMany)
	require.Equal(t, backlogOne, backlogMany)
	require.Equal(t, int64(2), boardOne, "project access with the credential, the sprint, its statuses and the audit level; issues with labels")
	require.Equal(t, int64(4), backlogOne, "credential check, project access, planned sprints, issues with labels")
	m := h.Do("GET", f.Path("/board"), nil, f.Member.Access).JSON(t)
	require.Len(t, m["columns"].([]any)[0].(map[string]any)["issues"], 20)
}

// TestBoardOpenedAudit records BOARD_OPENED only while the ALL level is on.
func TestBoardOpenedAudit(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewSprintProject(t, h)
	boardJobs := func() int {
		return h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'BOARD_OPENED'
			AND args->>'resourceId' = $1`, f.ProjectID.String())
	}
	require.Equal(t, http.StatusNoContent, h.Do("GET", f.Path("/board"), nil, f.Member.Access).Status)
	apitest.SetAuditLevel(t, h, "WRITE", true)
	require.Equal(t, http.StatusNoContent, h.Do("GET", f.Path("/board"), nil, f.Member.Access).Status)
	require.Equal(t, 0, boardJobs(), "ALL is off")

	apitest.SetAuditLevel(t, h, "ALL", true)
	require.Equal(t, http.StatusNoContent, h.Do("GET", f.Path("/board"), nil, f.Member.Access).Status)
	sp := f.NewSprint(t, map[string]any{"name": "S"})["id"].(string)
	f.Start(t, sp)
	require.Equal(t, http.StatusOK, h.Do("GET", f.Path("/board"), nil, f.Viewer.Access).Status)
	require.Equal(t, 2, boardJobs())
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'BOARD_OPENED'
		AND args->>'level' = 'ALL' AND args->>'userEmail' = $1 AND (args->>'details')::jsonb->>'sprintId' = $2`, f.Viewer.Email, sp))

	apitest.SetAuditLevel(t, h, "ALL", false)
	require.Equal(t, http.StatusOK, h.Do("GET", f.Path("/board"), nil, f.Viewer.Access).Status)
	require.Equal(t, 2, boardJobs())
}
