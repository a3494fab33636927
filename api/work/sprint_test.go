package work_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/samber/lo"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestSprintCreateListAndPatch(t *testing.T) {
	t.Parallel()
	f := apitest.NewSprintProject(t, apitest.Shared(t))
	a := f.NewSprint(t, map[string]any{"name": "  Sprint A ", "goal": "Ship", "startDate": "2026-03-02", "endDate": "2026-03-16"})
	require.ElementsMatch(t, []string{"id", "name", "goal", "status", "startDate", "endDate", "plannedPoints",
		"completedPoints", "projectId", "createdAt"}, lo.Keys(a))
	require.Equal(t, "Sprint A", a["name"])
	require.Equal(t, "Ship", a["goal"])
	require.Equal(t, "PLANNED", a["status"])
	require.Equal(t, "2026-03-02", a["startDate"])
	require.Equal(t, "2026-03-16", a["endDate"])
	require.Nil(t, a["plannedPoints"])
	require.Nil(t, a["completedPoints"])
	require.Equal(t, f.ProjectID.String(), a["projectId"])
	b := f.NewSprint(t, map[string]any{"name": "Sprint B"})
	require.Nil(t, b["goal"])
	require.Nil(t, b["startDate"])
	require.Nil(t, b["endDate"])

	// Creation order; any role reads.
	r := f.H.Do("GET", f.Path("/sprints"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	list := r.Array(t)
	require.Len(t, list, 2)
	require.Equal(t, a["id"], list[0].(map[string]any)["id"])
	require.Equal(t, b["id"], list[1].(map[string]any)["id"])

	// null and absent members are unchanged.
	r = f.Call("PATCH", a["id"].(string), "", map[string]any{"name": "Renamed", "goal": nil, "endDate": "2026-03-20"})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.Equal(t, "Renamed", m["name"])
	require.Equal(t, "Ship", m["goal"])
	require.Equal(t, "2026-03-02", m["startDate"])
	require.Equal(t, "2026-03-20", m["endDate"])

	// Validation: missing name, blank name, end before start (in the request, and
	// against the stored start), malformed date.
	r = f.H.Do("POST", f.Path("/sprints"), map[string]any{"goal": "x"}, f.Member.Access)
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))
	r = f.H.Do("POST", f.Path("/sprints"), map[string]any{"name": "  "}, f.Member.Access)
	apitest.RequireProblem(t, r, 400, "VALIDATION_ERROR", apitest.NoReason)
	require.Contains(t, r.JSON(t)["details"], "name")
	r = f.H.Do("POST", f.Path("/sprints"), map[string]any{"name": "x", "startDate": "2026-03-02", "endDate": "2026-03-01"}, f.Member.Access)
	apitest.RequireProblem(t, r, 400, "VALIDATION_ERROR", apitest.NoReason)
	require.Contains(t, r.JSON(t)["details"], "endDate")
	r = f.Call("PATCH", a["id"].(string), "", map[string]any{"endDate": "2026-03-01"})
	apitest.RequireProblem(t, r, 400, "VALIDATION_ERROR", apitest.NoReason)
	require.Contains(t, r.JSON(t)["details"], "endDate")
	r = f.Call("PATCH", a["id"].(string), "", map[string]any{"startDate": "2026-3-1"})
	apitest.RequireProblem(t, r, 400, "VALIDATION_ERROR", apitest.NoReason)
	require.Contains(t, r.JSON(t)["details"], "startDate")
	r = f.Call("PATCH", a["id"].(string), "", map[string]any{"name": 5})
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("WRONG_TYPE"))

	// Roles: a VIEWER cannot write, an outsider cannot read.
	r = f.H.Do("POST", f.Path("/sprints"), map[string]any{"name": "x"}, f.Viewer.Access)
	require.Equal(t, http.StatusForbidden, r.Status)
	r = f.H.Do("GET", f.Path("/sprints"), nil, f.Outsider.Access)
	require.Equal(t, http.StatusForbidden, r.Status)
	require.Equal(t, 2, f.H.Count("SELECT count(*) FROM sprints WHERE project_id = $1", f.ProjectID))

	// There is no delete.
	r = f.Call("DELETE", a["id"].(string), "", nil)
	require.Equal(t, http.StatusMethodNotAllowed, r.Status, "%s", r.Body)
}

func TestSprintStartSnapshotsPointsAndDate(t *testing.T) {
	t.Parallel()
	f := apitest.NewSprintProject(t, apitest.Shared(t))
	sp := f.NewSprint(t, map[string]any{"name": "S"})
	id := sp["id"].(string)
	i1 := f.Create(t, map[string]any{"title": "one", "storyPoints": 3})
	i2 := f.Create(t, map[string]any{"title": "two", "storyPoints": 5})
	i3 := f.Create(t, map[string]any{"title": "three"})
	f.Put(t, id, i1["key"].(string))
	f.Put(t, id, i2["id"].(string))
	f.Put(t, id, i3["id"].(string))

	started := f.Start(t, id)
	require.Equal(t, "ACTIVE", started["status"])
	require.EqualValues(t, 8, started["plannedPoints"], "3 + 5 + null")
	require.Equal(t, time.Now().UTC().Format(time.DateOnly), started["startDate"])
	require.Nil(t, started["completedPoints"])

	// Later changes do not update the snapshot.
	f.Patch(t, i3["id"].(string), map[string]any{"storyPoints": 13})
	r := f.H.Do("GET", f.Path("/sprints"), nil, f.Member.Access)
	require.EqualValues(t, 8, r.Array(t)[0].(map[string]any)["plannedPoints"])

	// A given start date is kept; an empty sprint snapshots 0.
	g := apitest.NewSprintProject(t, apitest.Shared(t))
	dated := g.NewSprint(t, map[string]any{"name": "D", "startDate": "2026-01-05"})
	m := g.Start(t, dated["id"].(string))
	require.Equal(t, "2026-01-05", m["startDate"])
	require.EqualValues(t, 0, m["plannedPoints"])
}

func TestSprintCompleteMovesUnfinishedToBacklog(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewSprintProject(t, h)
	apitest.SetAuditLevel(t, h, "WRITE", true)
	sp := f.NewSprint(t, map[string]any{"name": "S"})
	id := sp["id"].(string)
	done1 := f.Create(t, map[string]any{"title": "done 5", "storyPoints": 5, "sprintId": id})
	done2 := f.Create(t, map[string]any{"title": "done null", "sprintId": id})
	done3 := f.Create(t, map[string]any{"title": "done 2", "storyPoints": 2, "sprintId": id})
	prog := f.Create(t, map[string]any{"title": "in progress 8", "storyPoints": 8, "sprintId": id})
	todo := f.Create(t, map[string]any{"title": "todo 1", "storyPoints": 1, "sprintId": id})
	other := f.Create(t, map[string]any{"title": "backlog", "storyPoints": 40})
	for _, d := range []map[string]any{done1, done2, done3} {
		f.Patch(t, d["id"].(string), map[string]any{"statusId": f.Done})
	}
	f.Patch(t, prog["id"].(string), map[string]any{"statusId": f.Prog})
	f.Start(t, id)

	r := f.Call("POST", id, "/complete", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.ElementsMatch(t, []string{"sprint", "movedToBacklogCount"}, lo.Keys(m))
	require.EqualValues(t, 2, m["movedToBacklogCount"], "the IN_PROGRESS and the TODO issue")
	closed := m["sprint"].(map[string]any)
	require.Equal(t, "CLOSED", closed["status"])
	require.EqualValues(t, 7, closed["completedPoints"], "5 + null + 2 of the DONE issues")
	require.EqualValues(t, 16, closed["plannedPoints"], "5 + null + 2 + 8 + 1 at start")

	for _, d := range []map[string]any{done1, done2, done3} {
		require.Equal(t, id, f.IssueSprint(t, d["id"].(string)), "DONE issues stay")
	}
	for _, d := range []map[string]any{prog, todo} {
		require.Equal(t, "", f.IssueSprint(t, d["id"].(string)), "unfinished issues go to the backlog")
		acts := f.Activity(t, d["id"].(string))
		require.Equal(t, "SPRINT_CHANGED:S→∅", acts[len(acts)-1])
		require.Contains(t, apitest.IssueAuditJobs(t, h, d["id"].(string)), "ISSUE_UPDATED")
	}
	require.Equal(t, "", f.IssueSprint(t, other["id"].(string)))
	require.Equal(t, []string{"SPRINT_STARTED", "SPRINT_COMPLETED"}, apitest.IssueAuditJobs(t, h, id))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'resourceId' = $1
		AND args->>'action' = 'SPRINT_COMPLETED' AND args->>'resourceType' = 'SPRINT' AND args->>'level' = 'WRITE'
		AND args->>'userEmail' = $2 AND (args->>'details')::jsonb->>'movedToBacklogCount' = '2'`, id, f.Member.Email))
}

// TestSprintStateTable walks the sprint states
// (docs/api-conventions.md#sprints-and-board): every refused row is 409 and leaves the
// sprint as it was.
func TestSprintStateTable(t *testing.T) {
	t.Parallel()
	f := apitest.NewSprintProject(t, apitest.Shared(t))
	iss := f.Create(t, map[string]any{"title": "x"})
	closed := f.NewSprint(t, map[string]any{"name": "closed"})["id"].(string)
	f.Start(t, closed)
	require.Equal(t, http.StatusOK, f.Call("POST", closed, "/complete", nil).Status)
	active := f.NewSprint(t, map[string]any{"name": "active"})["id"].(string)
	f.Start(t, active)
	planned := f.NewSprint(t, map[string]any{"name": "planned"})["id"].(string)

	for _, tc := range []struct {
		name, method, id, suffix string
		body                     any
		reason                   string
	}{
		{"start with another ACTIVE", "POST", planned, "/start", nil, "SPRINT_ALREADY_ACTIVE"},
		{"start ACTIVE", "POST", active, "/start", nil, "SPRINT_STATE"},
		{"start CLOSED", "POST", closed, "/start", nil, "SPRINT_STATE"},
		{"complete PLANNED", "POST", planned, "/complete", nil, "SPRINT_STATE"},
		{"complete CLOSED", "POST", closed, "/complete", nil, "SPRINT_STATE"},
		{"PUT issue into CLOSED", "PUT", closed, "/issues/" + iss["key"].(string), nil, "SPRINT_STATE"},
		{"startDate on ACTIVE", "PATCH", active, "", map[string]any{"startDate": "2026-01-01"}, "SPRINT_STATE"},
		{"endDate on ACTIVE", "PATCH", active, "", map[string]any{"endDate": "2030-01-01"}, "SPRINT_STATE"},
		{"endDate on CLOSED", "PATCH", closed, "", map[string]any{"endDate": "2030-01-01"}, "SPRINT_STATE"},
	} {
		before := f.H.Count("SELECT count(*) FROM sprints WHERE project_id = $1 AND status = 'ACTIVE'", f.ProjectID)
		r := f.Call(tc.method, tc.id, tc.suffix, tc.body)
		require.Equal(t, http.StatusConflict, r.Status, "%s: %s", tc.name, r.Body)
		require.Equal(t, tc.reason, r.JSON(t)["reason"], tc.name)
		require.Equal(t, "CONFLICT", r.JSON(t)["code"], tc.name)
		require.Equal(t, before, f.H.Count("SELECT count(*) FROM sprints WHERE project_id = $1 AND status = 'ACTIVE'", f.ProjectID))
	}
	require.Equal(t, "", f.IssueSprint(t, iss["id"].(string)))
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM sprints WHERE id = $1 AND status = 'PLANNED' AND start_date IS NULL", planned))
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM sprints WHERE id = $1 AND end_date IS NULL", active))

	// Allowed rows: PUT into ACTIVE and PLANNED, a name change on ACTIVE and CLOSED.
	f.Put(t, active, iss["id"].(string))
	require.Equal(t, active, f.IssueSprint(t, iss["id"].(string)))
	f.Put(t, planned, iss["key"].(string))
	require.Equal(t, planned, f.IssueSprint(t, iss["id"].(string)))
	for _, id := range []string{active, closed} {
		r := f.Call("PATCH", id, "", map[string]any{"name": "renamed", "goal": "g"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, "renamed", r.JSON(t)["name"])
	}
}

// TestSprintConcurrentStarts starts two PLANNED sprints of one project at once, many
// times: the database's partial unique index lets exactly one win each time.
func TestSprintConcurrentStarts(t *testing.T) {
	t.Parallel()
	for round := 0; round < 5; round++ {
		f := apitest.NewSprintProject(t, apitest.Shared(t))
		ids := []string{f.NewSprint(t, map[string]any{"name": "a"})["id"].(string),
			f.NewSprint(t, map[string]any{"name": "b"})["id"].(string)}
		statuses := make([]int, 2)
		reasons := make([]any, 2)
		var wg sync.WaitGroup
		ready := make(chan struct{})
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-ready
				r := f.Call("POST", ids[i], "/start", nil)
				statuses[i] = r.Status
				if r.Status != http.StatusOK {
					reasons[i] = r.JSON(t)["reason"]
				}
			}()
		}
		close(ready)
		wg.Wait()
		require.ElementsMatch(t, []int{http.StatusOK, http.StatusConflict}, statuses, "round %d", round)
		require.Contains(t, reasons, "SPRINT_ALREADY_ACTIVE")
		require.Equal(t, 1, f.H.Count("SELECT count(*) FROM sprints WHERE project_id = $1 AND status = 'ACTIVE'", f.ProjectID))
	}
}

func TestSprintOfAnotherProject(t *testing.T) {
	t.Parallel()
	f := apitest.NewSprintProject(t, apitest.Shared(t))
	g := apitest.NewSprintProject(t, apitest.Shared(t))
	foreign := g.NewSprint(t, map[string]any{"name": "theirs"})["id"].(string)
	iss := f.Create(t, map[string]any{"title": "x"})
	for _, tc := range []struct {
		method, suffix string
		body           any
	}{
		{"PATCH", "", map[string]any{"name": "mine now"}},
		{"POST", "/start", nil},
		{"POST", "/complete", nil},
		{"PUT", "/issues/" + iss["id"].(string), nil},
		{"DELETE", "/issues/" + iss["id"].(string), nil},
	} {
		r := f.Call(tc.method, foreign, tc.suffix, tc.body)
		apitest.RequireProblem(t, r, http.StatusForbidden, "FORBIDDEN", apitest.Reason("SPRINT_NOT_IN_PROJECT"))
		r = f.Call(tc.method, uuid.NewString(), tc.suffix, tc.body)
		apitest.RequireProblem(t, r, http.StatusNotFound, "NOT_FOUND", apitest.Reason("SPRINT_NOT_FOUND"))
		r = f.Call(tc.method, "not-a-uuid", tc.suffix, tc.body)
		apitest.RequireProblem(t, r, http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	}
	require.Equal(t, 1, g.H.Count("SELECT count(*) FROM sprints WHERE id = $1 AND name = 'theirs' AND status = 'PLANNED'", foreign))
}

func TestSprintIssueMembership(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewSprintProject(t, h)
	apitest.SetAuditLevel(t, h, "WRITE", true)
	a := f.NewSprint(t, map[string]any{"name": "A"})["id"].(string)
	b := f.NewSprint(t, map[string]any{"name": "B"})["id"].(string)
	iss := f.Create(t, map[string]any{"title": "x"})
	id, key := iss["id"].(string), iss["key"].(string)

	// PUT by key, as PATCH sprintId would: activity and the sprint field change event.
	f.Put(t, a, key)
	require.Equal(t, a, f.IssueSprint(t, id))
	f.Put(t, b, id)
	require.Equal(t, b, f.IssueSprint(t, id))
	require.Equal(t, []string{"SPRINT_CHANGED:∅→A", "SPRINT_CHANGED:A→B"}, f.Activity(t, id))
	require.Equal(t, 2, h.Count(`SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'resourceId' = $1
		AND args->>'action' = 'ISSUE_UPDATED' AND (args->>'details')::jsonb->>'field' = 'sprint'`, id))
	// Again into the same sprint: no change, still 204.
	f.Put(t, b, id)
	require.Len(t, f.Activity(t, id), 2)

	// DELETE of an issue in another sprint, or in none.
	r := f.Call("DELETE", a, "/issues/"+id, nil)
	apitest.RequireProblem(t, r, http.StatusConflict, "CONFLICT", apitest.Reason("ISSUE_NOT_IN_SPRINT"))
	r = f.Call("DELETE", b, "/issues/"+key, nil)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Equal(t, "", f.IssueSprint(t, id))
	require.Equal(t, "SPRINT_CHANGED:B→∅", f.Activity(t, id)[2])
	r = f.Call("DELETE", b, "/issues/"+id, nil)
	apitest.RequireProblem(t, r, http.StatusConflict, "CONFLICT", apitest.Reason("ISSUE_NOT_IN_SPRINT"))

	// Issues of another project, unknown issues and malformed refs.
	g := apitest.NewSprintProject(t, apitest.Shared(t))
	theirs := g.Create(t, map[string]any{"title": "theirs"})
	for _, ref := range []string{theirs["id"].(string), theirs["key"].(string), uuid.NewString(), f.Key + "-999"} {
		r = f.Call("PUT", a, "/issues/"+ref, nil)
		apitest.RequireProblem(t, r, http.StatusNotFound, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
		r = f.Call("DELETE", a, "/issues/"+ref, nil)
		apitest.RequireProblem(t, r, http.StatusNotFound, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	}
	require.Equal(t, "", g.IssueSprint(t, theirs["id"].(string)))
	r = f.Call("PUT", a, "/issues/bad%20ref", nil)
	apitest.RequireProblem(t, r, http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_ISSUE_REF"))

	// A VIEWER may not move issues.
	r = f.H.Do("PUT", f.Path("/sprints/"+a+"/issues/"+id), nil, f.Viewer.Access)
	require.Equal(t, http.StatusForbidden, r.Status)
	require.Equal(t, "", f.IssueSprint(t, id))
}
