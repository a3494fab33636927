package work_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// listKeys fetches the issue list with query q and returns the keys in reply order,
// checking the page members on the way.
func listKeys(f *apitest.Project, t *testing.T, token, q string) []string {
	t.Helper()
	r := f.H.Do("GET", f.Path("/issues?"+q), nil, token)
	require.Equal(t, http.StatusOK, r.Status, "%s: %s", q, r.Body)
	m := r.JSON(t)
	content := m["content"].([]any)
	keys := make([]string, len(content))
	for i, c := range content {
		apitest.RequireIssueShape(t, c.(map[string]any))
		keys[i] = c.(map[string]any)["key"].(string)
	}
	require.EqualValues(t, len(content), m["numberOfElements"])
	return keys
}

func TestIssueListFilters(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	other := apitest.NewProject(t, apitest.Shared(t))
	other.Create(t, map[string]any{"title": "Other project login", "priority": "HIGH"})
	l1, l2 := f.Label(t, "l1"), f.Label(t, "l2")
	v1, v2 := f.Version(t, "v1"), f.Version(t, "v2")
	sprint := f.Sprint(t, "S", "ACTIVE")
	today := time.Now().UTC()
	yesterday, tomorrow, lastWeek := today.AddDate(0, 0, -1).Format(time.DateOnly), today.AddDate(0, 0, 1).Format(time.DateOnly),
		today.AddDate(0, 0, -7).Format(time.DateOnly)

	a := f.Create(t, map[string]any{"title": "Alpha login", "type": "BUG", "priority": "HIGH", "assigneeId": f.Member.ID,
		"dueDate": yesterday, "sprintId": sprint, "labelIds": []string{l1}})
	b := f.Create(t, map[string]any{"title": "Beta", "description": "the LOGIN page", "type": "STORY", "priority": "LOW",
		"assigneeId": f.Owner.ID, "dueDate": tomorrow, "labelIds": []string{l2}})
	c := f.Create(t, map[string]any{"title": "Gamma 100%", "priority": "HIGH", "parentId": a["id"], "dueDate": lastWeek,
		"sprintId": sprint, "labelIds": []string{l1, l2}})
	d := f.Create(t, map[string]any{"title": "Delta", "type": "SUBTASK", "parentId": a["id"], "dueDate": lastWeek})
	f.Patch(t, a["id"].(string), map[string]any{"fixVersionIds": []string{v1}})
	f.Patch(t, c["id"].(string), map[string]any{"fixVersionIds": []string{v1}, "affectsVersionIds": []string{v2}, "statusId": f.Done})
	f.Patch(t, b["id"].(string), map[string]any{"affectsVersionIds": []string{v1}, "statusId": f.Prog})
	A, B, C, D := a["key"].(string), b["key"].(string), c["key"].(string), d["key"].(string)

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{A, B, C, D}},
		{"assigneeMe=true", []string{B}},
		{"assigneeMe=false", []string{A, B, C, D}},
		{"assigneeId=" + f.Member.ID.String(), []string{A}},
		{"overdue=true", []string{D, A}}, // C is DONE; by due date
		{"labelId=" + l1, []string{A, C}},
		{"labelId=" + l2, []string{B, C}},
		{"fixVersionId=" + v1, []string{A, C}},
		{"affectsVersionId=" + v1, []string{B}},
		{"fixVersionId=" + v1 + "&affectsVersionId=" + v2, []string{C}},
		{"fixVersionId=" + v1 + "&labelId=" + l2, []string{C}}, // filters always AND, labelId included
		{"statusId=" + f.Todo.String(), []string{A, D}},
		{"statusId=" + f.Done.String(), []string{C}},
		{"sprintId=" + sprint, []string{A, C}},
		{"backlog=true", []string{B, D}},
		{"type=SUBTASK", []string{D}},
		{"priority=HIGH", []string{A, C}},
		{"priority=HIGH&type=BUG", []string{A}},
		{"parentId=" + a["id"].(string), []string{C, D}},
		{"q=login", []string{A, B}}, // by rank: the title's match above the description's
		{"q=LOGIN&priority=LOW", []string{B}},
		{"q=" + url.QueryEscape("100%"), []string{C}},
		{"q=" + url.QueryEscape("%"), []string{}}, // no word: nothing matches
		{"q=_", []string{}},
		{"overdue=true&labelId=" + l1, []string{A}},
		{"backlog=true&sprintId=" + sprint, []string{}},
	} {
		require.Equal(t, tc.want, listKeys(f, t, f.Owner.Access, tc.query), tc.query)
	}
	require.Equal(t, []string{A}, listKeys(f, t, f.Member.Access, "assigneeMe=true"), "assigneeMe is the caller")
	require.Equal(t, []string{A, B, C, D}, listKeys(f, t, f.Viewer.Access, ""), "viewers read the list")

	// sort=updatedAt: last change first.
	time.Sleep(2 * time.Millisecond)
	f.Patch(t, D, map[string]any{"title": "Delta 2"})
	require.Equal(t, []string{D, B, C, A}, listKeys(f, t, f.Owner.Access, "sort=updatedAt"))
	require.Equal(t, []string{D, B, C, A}, listKeys(f, t, f.Owner.Access, "sort=updatedAt,desc"))
	require.Equal(t, []string{A, B, C, D}, listKeys(f, t, f.Owner.Access, "sort=createdAt"))

	// Labels are filled in the list; versions are not.
	r := f.H.Do("GET", f.Path("/issues?labelId="+l1), nil, f.Owner.Access).JSON(t)
	first := r["content"].([]any)[1].(map[string]any)
	require.Len(t, first["labels"], 2)
	require.Equal(t, []any{}, first["fixVersions"])
	require.Equal(t, "Done", first["statusName"])
	require.Equal(t, "DONE", first["statusCategory"])
	require.Equal(t, "S", first["sprintName"])
	require.Equal(t, "Owner", first["reporterName"])

	for _, bad := range []struct{ query, reason string }{
		{"assigneeId=nope", "INVALID_UUID"}, {"labelId=1", "INVALID_UUID"}, {"sprintId=x", "INVALID_UUID"},
		{"type=FEATURE", "INVALID_ENUM"}, {"priority=low", "INVALID_ENUM"}, {"overdue=yes", "INVALID_QUERY"},
		{"backlog=1", "INVALID_QUERY"}, {"sort=title", "INVALID_QUERY"}, {"page=-1", "INVALID_PAGE"}, {"size=0", "INVALID_PAGE"},
		{"size=abc", "INVALID_PAGE"}, {"q=%00", "INVALID_QUERY"}, {"q=%FF", "INVALID_QUERY"},
		{"page=9223372036854775807", "INVALID_PAGE"}, {"page=99999999999999999999", "INVALID_PAGE"},
	} {
		apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues?"+bad.query), nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.ReasonOrNone(bad.reason))
	}
}

func TestIssueListPages(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	_, err := f.H.DB.Pool.Exec(context.Background(), `
		WITH n AS (UPDATE projects SET issue_seq = 205 WHERE id = $1 RETURNING key)
		INSERT INTO issues (project_id, number, key, title, status_id, reporter_id)
		SELECT $1, g, n.key || '-' || g, 'Bulk ' || g, $2, $3 FROM n, generate_series(1, 205) AS g`, f.ProjectID, f.Todo, f.Owner.ID)
	require.NoError(t, err)

	page := func(q string) map[string]any {
		r := f.H.Do("GET", f.Path("/issues?"+q), nil, f.Owner.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return r.JSON(t)
	}
	m := page("")
	require.EqualValues(t, 50, m["size"], "default size 50")
	require.EqualValues(t, 205, m["totalElements"])
	require.EqualValues(t, 5, m["totalPages"])
	require.EqualValues(t, 0, m["number"])
	require.Equal(t, true, m["first"])
	require.Equal(t, false, m["last"])
	require.Len(t, m["content"], 50)
	require.Equal(t, f.Key+"-1", m["content"].([]any)[0].(map[string]any)["key"])

	m = page("page=4")
	require.Len(t, m["content"], 5)
	require.Equal(t, true, m["last"])
	require.Equal(t, f.Key+"-201", m["content"].([]any)[0].(map[string]any)["key"])

	m = page("size=500&page=1")
	require.EqualValues(t, 200, m["size"], "clamped")
	require.Len(t, m["content"], 5)
	require.EqualValues(t, 2, m["totalPages"])

	m = page("page=2147483647&size=200")
	require.Equal(t, []any{}, m["content"])
	require.EqualValues(t, 205, m["totalElements"])

	m = page("page=9")
	require.Equal(t, []any{}, m["content"])
	require.EqualValues(t, 205, m["totalElements"], "past the end the total is still right")
	require.Equal(t, true, m["empty"])

	m = page("size=7&page=2&q=Bulk%201")
	require.EqualValues(t, 111, m["totalElements"], "1, 10–19, 100–199")
	require.Len(t, m["content"], 7)
	require.Equal(t, f.Key+"-109", m["content"].([]any)[6].(map[string]any)["key"])
}

// TestIssueListQueryCount proves the list makes the same number of queries for a page
// of 1 and of 50 issues with labels, assignees and sprints: no query per issue.
func TestIssueListQueryCount(t *testing.T) {
	t.Parallel()
	h, counter := apitest.CountingHarness(t)
	f := apitest.NewProject(t, h)
	sprint := f.Sprint(t, "S", "ACTIVE")
	labels := []string{f.Label(t, "a"), f.Label(t, "b")}

	count := func(query string) int64 {
		before := counter.N.Load()
		r := h.Do("GET", f.Path("/issues?"+query), nil, f.Member.Access)
		require.Equal(t, http.StatusOK, r.Status)
		return counter.N.Load() - before
	}
	create := func(i int) {
		f.Create(t, map[string]any{"title": "Issue " + strconv.Itoa(i), "assigneeId": []any{f.Member.ID, f.Owner.ID}[i%2],
			"sprintId": sprint, "labelIds": labels[:i%2+1]})
	}
	create(0)
	one, oneFiltered := count("size=50"), count("size=50&sprintId="+sprint)
	for i := 1; i < 50; i++ {
		create(i)
	}
	fifty, fiftyFiltered := count("size=50"), count("size=50&sprintId="+sprint)
	require.Equal(t, one, fifty, fmt.Sprintf("queries for 1 issue: %d, for 50: %d", one, fifty))
	require.Equal(t, oneFiltered, fiftyFiltered)
	require.Equal(t, int64(2), one, "project access with the credential's user row, the page with its total and labels")
	require.Equal(t, int64(2), oneFiltered)
	m := h.Do("GET", f.Path("/issues?size=50"), nil, f.Member.Access).JSON(t)
	require.Len(t, m["content"], 50)
	require.EqualValues(t, 50, m["totalElements"])
	require.Len(t, m["content"].([]any)[1].(map[string]any)["labels"], 2)
}
