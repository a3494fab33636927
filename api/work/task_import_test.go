package work_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// taskImport uploads file as an import of format into f's project and returns the
// task id (202 expected).
func taskImport(t *testing.T, f *apitest.Project, u apitest.User, format string, file []byte, extra ...apitest.Part) string {
	t.Helper()
	parts := append([]apitest.Part{{Name: "format", Data: format}, apitest.FilePart("import.dat", "application/octet-stream", string(file))}, extra...)
	body, ct := apitest.MultipartBody(t, parts...)
	r := f.H.Do("POST", f.Path("/import"), body, u.Access, "Content-Type", ct)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	return r.JSON(t)["taskId"].(string)
}

// taskImportFixture is a fresh project with a member "jdoe"-mapped user and workers.
func taskImportFixture(t *testing.T) *apitest.Project {
	t.Helper()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	taskWorkerClient(t, h)
	return f
}

// taskIssueList lists every issue of f's project in key order.
func taskIssueList(t *testing.T, f *apitest.Project) []map[string]any {
	t.Helper()
	r := f.H.Do("GET", f.Path("/issues?size=200"), nil, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var out []map[string]any
	for _, x := range r.JSON(t)["content"].([]any) {
		// One by one: the list leaves the versions out.
		out = append(out, f.Get(t, x.(map[string]any)["key"].(string)))
	}
	return out
}

// taskComments lists an issue's comment bodies, oldest first.
func taskComments(t *testing.T, f *apitest.Project, key string) []string {
	t.Helper()
	r := f.H.Do("GET", f.Path("/issues/"+key+"/comments?size=100"), nil, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var out []string
	for _, x := range r.JSON(t)["content"].([]any) {
		out = append(out, x.(map[string]any)["body"].(string))
	}
	sort.Strings(out)
	return out
}

func taskErrorCodes(m map[string]any) []string {
	var out []string
	for _, e := range m["errors"].([]any) {
		out = append(out, e.(map[string]any)["code"].(string))
	}
	return out
}

// TestImportJiraCSV: repeated columns, quoted multi-line cells, Jira's dates, the user
// mapping, statuses by name or category, parents by issue id, and attachments skipped.
func TestImportJiraCSV(t *testing.T) {
	t.Parallel()
	f := taskImportFixture(t)
	file, err := os.ReadFile("testdata/import/jira.csv")
	require.NoError(t, err)
	mapping, _ := json.Marshal(map[string]string{"jdoe": f.Member.Email, "Jane Doe": f.Owner.Email})
	id := taskImport(t, f, f.Owner, "jira-csv", file, apitest.Part{Name: "userMapping", Data: string(mapping)})
	m := taskWait(t, f.H, f.Owner, id)
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	codes := taskErrorCodes(m)
	require.ElementsMatch(t, []string{"ATTACHMENT_SKIPPED", "STATUS_UNMAPPED", "MISSING_TITLE"}, codes, "%v", m["errors"])
	require.Equal(t, 4.0, m["progress"].(map[string]any)["total"])

	issues := taskIssueList(t, f)
	require.Len(t, issues, 3, "the row without a summary is skipped")
	bug, story, sub := issues[0], issues[1], issues[2]
	require.Equal(t, "Login fails on Safari", bug["title"])
	require.Equal(t, "Steps:\n1. Open Safari\n2. Press \"Log in\", nothing happens", bug["description"])
	require.Equal(t, "BUG", bug["type"])
	require.Equal(t, "HIGH", bug["priority"])
	require.Equal(t, "In Progress", bug["statusName"])
	require.Equal(t, f.Member.ID.String(), bug["assigneeId"])
	require.Equal(t, f.Owner.ID.String(), bug["reporterId"])
	require.Equal(t, 3.0, bug["storyPoints"])
	require.Equal(t, "Sprint 2", bug["sprintName"], "the last Sprint column is the current sprint")
	require.True(t, strings.HasPrefix(bug["createdAt"].(string), "2024-03-12T09:15:00"), bug["createdAt"])
	var labels []string
	for _, l := range bug["labels"].([]any) {
		labels = append(labels, l.(map[string]any)["name"].(string))
	}
	require.ElementsMatch(t, []string{"frontend", "safari"}, labels)
	require.Equal(t, "1.0", bug["fixVersions"].([]any)[0].(map[string]any)["name"])
	var team string
	for _, cf := range bug["customFields"].([]any) {
		if cf := cf.(map[string]any); cf["fieldName"] == "Team" {
			team = cf["textValue"].(string)
		}
	}
	require.Equal(t, "Web", team)
	require.Equal(t, []string{"Fixed in branch", "Reproduced, see &#34;console&#34;;<br>multi-line comment"}, taskComments(t, f, bug["key"].(string)))

	require.Equal(t, "To Do", story["statusName"], "an unknown status without a category goes to the first TODO status")
	require.Equal(t, 3.0, story["storyPoints"], "2.5 rounds to 3")
	require.Equal(t, "SUBTASK", sub["type"])
	require.Equal(t, "Done", sub["statusName"])
	require.Equal(t, bug["id"], sub["parentId"], "Parent id 10001 is WEB-1")
	require.Equal(t, 3, f.H.Count("SELECT count(*) FROM issue_imports WHERE task_id = $1 AND source_key LIKE 'WEB-%'", id),
		"the original keys are kept")
}

// TestImportJiraCSVMalformedFails: a CSV the reader cannot read fails the task with its
// row and column, and creates nothing.
func TestImportJiraCSVMalformedFails(t *testing.T) {
	t.Parallel()
	f := taskImportFixture(t)
	file := []byte("Summary,Issue key\nFine,A-1\n\"Broken \"quote\",A-2\n")
	m := taskWait(t, f.H, f.Owner, taskImport(t, f, f.Owner, "jira-csv", file))
	require.Equal(t, "FAILED", m["state"])
	e := m["errors"].([]any)[0].(map[string]any)
	require.Equal(t, "INVALID_FILE", e["code"])
	require.Equal(t, "row 3, column 9", e["item"])
	require.Empty(t, taskIssueList(t, f))

	m = taskWait(t, f.H, f.Owner, taskImport(t, f, f.Owner, "jira-csv", []byte("Title,Key\nx,y\n")))
	require.Equal(t, "FAILED", m["state"])
	require.Contains(t, m["errors"].([]any)[0].(map[string]any)["message"], "Summary")
}

// TestImportGitHubJSON: labels by name, open/closed by category, milestones as versions,
// comments as arrays; pull requests are skipped; HTML in comments is shown as text.
func TestImportGitHubJSON(t *testing.T) {
	t.Parallel()
	f := taskImportFixture(t)
	file, err := os.ReadFile("testdata/import/github.json")
	require.NoError(t, err)
	mapping, _ := json.Marshal(map[string]string{"octocat": f.Member.Email})
	m := taskWait(t, f.H, f.Owner, taskImport(t, f, f.Owner, "github-json", file, apitest.Part{Name: "userMapping", Data: string(mapping)}))
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	require.ElementsMatch(t, []string{"PULL_REQUEST_SKIPPED", "USER_UNMAPPED", "USER_UNMAPPED"}, taskErrorCodes(m), "%v", m["errors"])
	issues := taskIssueList(t, f)
	require.Len(t, issues, 2)
	require.Equal(t, "Crash when saving an empty draft", issues[0]["title"])
	require.Equal(t, "BUG", issues[0]["type"])
	require.Equal(t, "To Do", issues[0]["statusName"])
	require.Equal(t, f.Member.ID.String(), issues[0]["assigneeId"])
	require.Equal(t, "v2.0", issues[0]["fixVersions"].([]any)[0].(map[string]any)["name"])
	require.Len(t, issues[0]["labels"], 2)
	require.Equal(t, "Done", issues[1]["statusName"])
	require.Nil(t, issues[1]["description"])
	comments := taskComments(t, f, issues[0]["key"].(string))
	require.Equal(t, []string{"Fixed by #13", "Same here &lt;b&gt;twice&lt;/b&gt;"}, comments)

	// Not JSON at all: FAILED, nothing created.
	m = taskWait(t, f.H, f.Owner, taskImport(t, f, f.Owner, "github-json", []byte(`{"not": "an array"}`)))
	require.Equal(t, "FAILED", m["state"])
	require.Len(t, taskIssueList(t, f), 2)
}

// TestImportDryRunChangesNothing: a dry run reports what it would create and every
// problem as its result, and creates nothing.
func TestImportDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	f := taskImportFixture(t)
	file, err := os.ReadFile("testdata/import/jira.csv")
	require.NoError(t, err)
	before := f.H.Count("SELECT count(*) FROM labels WHERE project_id = $1", f.ProjectID)
	m := taskWait(t, f.H, f.Owner, taskImport(t, f, f.Owner, "jira-csv", file, apitest.Part{Name: "dryRun", Data: "true"}))
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	require.Contains(t, taskErrorCodes(m), "USER_UNMAPPED", "no mapping: jdoe is unknown")
	dl := taskDownload(t, f.H, f.Owner, m)
	var report struct {
		DryRun      bool
		WouldCreate map[string]int
		Problems    []map[string]any
	}
	require.NoError(t, json.Unmarshal(dl.Body, &report))
	require.True(t, report.DryRun)
	require.Equal(t, 4, report.WouldCreate["issues"])
	require.Equal(t, 3, report.WouldCreate["labels"])
	require.Equal(t, 1, report.WouldCreate["sprints"], "the last Sprint column only")
	require.Equal(t, 2, report.WouldCreate["comments"])
	require.NotEmpty(t, report.Problems)
	require.Empty(t, taskIssueList(t, f))
	require.Equal(t, before, f.H.Count("SELECT count(*) FROM labels WHERE project_id = $1", f.ProjectID))
	require.Zero(t, f.H.Count("SELECT count(*) FROM sprints WHERE project_id = $1", f.ProjectID))
	require.Zero(t, f.H.Count("SELECT count(*) FROM custom_fields WHERE project_id = $1", f.ProjectID))
}

// TestImportBadRequests: the form is checked before anything is queued.
func TestImportBadRequests(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	for _, c := range []struct {
		parts  []apitest.Part
		reason string
	}{
		{[]apitest.Part{apitest.FilePart("a.csv", "text/csv", "x")}, "MISSING_FIELD"},
		{[]apitest.Part{{Name: "format", Data: "xml"}, apitest.FilePart("a.csv", "text/csv", "x")}, "INVALID_ENUM"},
		{[]apitest.Part{{Name: "format", Data: "jira-csv"}}, "MISSING_FILE_PART"},
		{[]apitest.Part{{Name: "format", Data: "jira-csv"}, {Name: "dryRun", Data: "maybe"}, apitest.FilePart("a.csv", "text/csv", "x")}, "WRONG_TYPE"},
		{[]apitest.Part{{Name: "format", Data: "jira-csv"}, {Name: "userMapping", Data: "[1]"}, apitest.FilePart("a.csv", "text/csv", "x")}, "WRONG_TYPE"},
	} {
		body, ct := apitest.MultipartBody(t, c.parts...)
		r := f.H.Do("POST", f.Path("/import"), body, f.Owner.Access, "Content-Type", ct)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", c.reason, r.Body)
		require.Equal(t, c.reason, r.JSON(t)["reason"])
	}
	body, ct := apitest.MultipartBody(t, apitest.Part{Name: "format", Data: "jira-csv"}, apitest.FilePart("a.csv", "text/csv", "x"))
	r := f.H.Do("POST", f.Path("/import"), body, f.Member.Access, "Content-Type", ct)
	require.Equal(t, http.StatusForbidden, r.Status, "import needs project ADMIN")
	r = f.H.Do("POST", f.Path("/import"), bytes.NewBufferString("{}").Bytes(), f.Owner.Access)
	require.Equal(t, http.StatusBadRequest, r.Status)
	require.Zero(t, f.H.Count("SELECT count(*) FROM tasks WHERE project_id = $1", f.ProjectID))
}

// TestImportRoundTrip: an export imported into another project reproduces every issue,
// comment, label, version, sprint, custom value and attachment, compared through the API.
func TestImportRoundTrip(t *testing.T) {
	t.Parallel()
	src, keys := taskExportFixture(t)
	sprint := src.H.Do("POST", src.Path("/sprints"), map[string]any{"name": "Sprint A", "goal": "Ship"}, src.Owner.Access)
	require.Equal(t, http.StatusCreated, sprint.Status, "%s", sprint.Body)
	field := customField(src, t, map[string]any{"name": "Severity", "type": "DROPDOWN"})["id"].(string)
	option := customOption(src, t, field, "Sev 1", 0)
	points := customField(src, t, map[string]any{"name": "Cost", "type": "NUMBER"})["id"].(string)
	src.Patch(t, keys[2], map[string]any{"sprintId": sprint.JSON(t)["id"], "statusId": src.Done,
		"customFieldValues": []any{map[string]any{"fieldId": field, "value": option}, map[string]any{"fieldId": points, "value": "12.5"}}})
	sub := src.Create(t, map[string]any{"title": "Child", "type": "SUBTASK", "parentId": src.Get(t, keys[0])["id"]})

	r := src.H.Do("POST", src.Path("/export"), nil, src.Owner.Access)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	zipped := taskDownload(t, src.H, src.Owner, taskWait(t, src.H, src.Owner, r.JSON(t)["taskId"].(string))).Body

	// Another project on the same database, with the same people.
	dstKey, dstID := apitest.CreateProject(t, src.H, src.Owner)
	dst := &apitest.Project{H: src.H, Key: dstKey, ProjectID: dstID, Owner: src.Owner, Member: src.Member, Viewer: src.Viewer}
	dst.AddMember(t, src.Member, "MEMBER")
	m := taskWait(t, dst.H, dst.Owner, taskImport(t, dst, dst.Owner, "taskweave", zipped))
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	require.Empty(t, m["errors"])

	a, b := taskIssueList(t, src), taskIssueList(t, dst)
	require.Len(t, b, len(a))
	require.Len(t, a, 4)
	comparable := func(is map[string]any) map[string]any {
		out := map[string]any{}
		for _, k := range []string{"title", "description", "type", "priority", "storyPoints", "statusName", "assigneeId",
			"reporterId", "dueDate", "sprintName", "createdAt"} {
			out[k] = is[k]
		}
		names := func(list any) []string {
			var ns []string
			for _, x := range list.([]any) {
				ns = append(ns, x.(map[string]any)["name"].(string))
			}
			return ns
		}
		out["labels"], out["fixVersions"] = names(is["labels"]), names(is["fixVersions"])
		var cfs []string
		for _, x := range is["customFields"].([]any) {
			cf := x.(map[string]any)
			raw, _ := json.Marshal([]any{cf["fieldName"], cf["textValue"], cf["numberValue"], cf["optionLabel"], cf["booleanValue"], cf["dateValue"]})
			cfs = append(cfs, string(raw))
		}
		sort.Strings(cfs)
		out["customFields"] = cfs
		out["hasParent"] = is["parentId"] != nil
		return out
	}
	for i := range a {
		require.Equal(t, comparable(a[i]), comparable(b[i]), "issue %d", i)
		require.Equal(t, taskComments(t, src, a[i]["key"].(string)), taskComments(t, dst, b[i]["key"].(string)))
		atsA := src.H.Do("GET", src.Path("/issues/"+a[i]["key"].(string)+"/attachments"), nil, src.Owner.Access).Array(t)
		atsB := dst.H.Do("GET", dst.Path("/issues/"+b[i]["key"].(string)+"/attachments"), nil, dst.Owner.Access).Array(t)
		require.Len(t, atsB, len(atsA))
		for j := range atsA {
			x, y := atsA[j].(map[string]any), atsB[j].(map[string]any)
			require.Equal(t, x["filename"], y["filename"])
			dl := dst.H.Do("GET", dst.Path("/issues/"+b[i]["key"].(string)+"/attachments/"+y["id"].(string)+"/download"), nil, dst.Owner.Access)
			require.Equal(t, "attached bytes", string(dl.Body))
		}
	}
	require.Equal(t, b[0]["id"], b[3]["parentId"], "the subtask's parent is the imported parent")
	require.Equal(t, sub["title"], b[3]["title"])
	sprints := dst.H.Do("GET", dst.Path("/sprints"), nil, dst.Owner.Access).Array(t)
	require.Len(t, sprints, 1)
	require.Equal(t, "Ship", sprints[0].(map[string]any)["goal"])
	_ = time.Second
}

// TestImportUndo: a cancelled import is undone: its issues and what it created go,
// what was there before stays; a second undo is 409.
func TestImportUndo(t *testing.T) {
	t.Parallel()
	f := taskImportFixture(t)
	keep := f.Label(t, "frontend")
	pre := taskIssues(t, f, 1, nil)
	file, err := os.ReadFile("testdata/import/jira.csv")
	require.NoError(t, err)
	id := taskImport(t, f, f.Owner, "jira-csv", file)
	m := taskWait(t, f.H, f.Owner, id)
	require.Equal(t, "SUCCEEDED", m["state"])
	r := f.H.Do("POST", "/api/v1/tasks/"+id+"/undo", nil, f.Owner.Access)
	require.Equal(t, http.StatusConflict, r.Status, "a succeeded import is not undone")
	// Make it look cancelled after its first batch, as a cancel mid-import leaves it.
	_, err = f.H.DB.Pool.Exec(t.Context(), "UPDATE tasks SET state = 'CANCELLED' WHERE id = $1", id)
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, f.H.Do("POST", "/api/v1/tasks/"+id+"/undo", nil, f.Member.Access).Status)
	r = f.H.Do("POST", "/api/v1/tasks/"+id+"/undo", nil, f.Owner.Access)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	u := taskWait(t, f.H, f.Owner, r.JSON(t)["taskId"].(string))
	require.Equal(t, "SUCCEEDED", u["state"], "%v", u)
	require.Equal(t, "UNDO", u["kind"])
	require.Equal(t, map[string]any{"done": 3.0, "total": 3.0, "failed": 0.0}, u["progress"])

	issues := taskIssueList(t, f)
	require.Len(t, issues, 1)
	require.Equal(t, pre[0], issues[0]["key"])
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM labels WHERE project_id = $1", f.ProjectID), "only the label of before")
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM labels WHERE id = $1", keep))
	require.Zero(t, f.H.Count("SELECT count(*) FROM sprints WHERE project_id = $1", f.ProjectID))
	require.Zero(t, f.H.Count("SELECT count(*) FROM custom_fields WHERE project_id = $1", f.ProjectID))
	require.Zero(t, f.H.Count("SELECT count(*) FROM versions WHERE project_id = $1", f.ProjectID))
	require.Equal(t, http.StatusConflict, f.H.Do("POST", "/api/v1/tasks/"+id+"/undo", nil, f.Owner.Access).Status)
}

// TestImportResumesAfterWorkerStopsWithoutDuplicates: a worker stopped mid-import (its
// running batch cancelled and rolled back) leaves the committed batches; another worker
// resumes from the cursor and every row becomes exactly one issue.
func TestImportResumesAfterWorkerStopsWithoutDuplicates(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	const n = 400
	var csv strings.Builder
	csv.WriteString("Summary,Issue key,Labels,Comment\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&csv, "\"Imported, number %d\",OLD-%d,bulk,\"01/Jan/24 9:00 AM;someone;line one\nline two\"\n", i, i)
	}
	id := taskImport(t, f, f.Owner, "jira-csv", []byte(csv.String()))

	stop := taskWorkerClient(t, h)
	taskCursorPast(t, h, id, 50)
	stop(true)
	cursor := h.Count("SELECT cursor FROM tasks WHERE id = $1", id)
	require.Less(t, cursor, n, "the worker was stopped mid-import")
	require.Equal(t, cursor, h.Count("SELECT count(*) FROM issues WHERE project_id = $1", f.ProjectID),
		"what the cursor says is what was created")

	taskWorkerClient(t, h)
	m := taskWait(t, h, f.Owner, id)
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	require.Equal(t, n, h.Count("SELECT count(*) FROM issues WHERE project_id = $1", f.ProjectID))
	require.Equal(t, n, h.Count("SELECT count(DISTINCT source_key) FROM issue_imports WHERE task_id = $1", id), "no row twice")
	require.Equal(t, n, h.Count("SELECT count(*) FROM comments c JOIN issues i ON i.id = c.issue_id WHERE i.project_id = $1", f.ProjectID))
	require.Equal(t, n, h.Count("SELECT max(number) FROM issues WHERE project_id = $1", f.ProjectID), "keys continue without gaps")
}
