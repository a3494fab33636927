package api_test

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
func taskImport(t *testing.T, f *issueFixture, u apitest.User, format string, file []byte, extra ...atPart) string {
	t.Helper()
	parts := append([]atPart{{"format", "", "", format}, atFile("import.dat", "application/octet-stream", string(file))}, extra...)
	body, ct := atBody(t, parts...)
	r := f.h.Do("POST", f.path("/import"), body, u.Access, "Content-Type", ct)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	return r.JSON(t)["taskId"].(string)
}

// taskImportFixture is a fresh project with a member "jdoe"-mapped user and workers.
func taskImportFixture(t *testing.T) *issueFixture {
	t.Helper()
	h := apitest.New(t, apitest.Options{})
	f := issueFixtureOn(t, h)
	taskWorkerClient(t, h)
	return f
}

// taskIssueList lists every issue of f's project in key order.
func taskIssueList(t *testing.T, f *issueFixture) []map[string]any {
	t.Helper()
	r := f.h.Do("GET", f.path("/issues?size=200"), nil, f.owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var out []map[string]any
	for _, x := range r.JSON(t)["content"].([]any) {
		// One by one: the list leaves the versions out.
		out = append(out, f.get(t, x.(map[string]any)["key"].(string)))
	}
	return out
}

// taskComments lists an issue's comment bodies, oldest first.
func taskComments(t *testing.T, f *issueFixture, key string) []string {
	t.Helper()
	r := f.h.Do("GET", f.path("/issues/"+key+"/comments?size=100"), nil, f.owner.Access)
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
	mapping, _ := json.Marshal(map[string]string{"jdoe": f.member.Email, "Jane Doe": f.owner.Email})
	id := taskImport(t, f, f.owner, "jira-csv", file, atPart{"userMapping", "", "", string(mapping)})
	m := taskWait(t, f.h, f.owner, id)
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
	require.Equal(t, f.member.ID.String(), bug["assigneeId"])
	require.Equal(t, f.owner.ID.String(), bug["reporterId"])
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
	require.Equal(t, 3, f.h.Count("SELECT count(*) FROM issue_imports WHERE task_id = $1 AND source_key LIKE 'WEB-%'", id),
		"the original keys are kept")
}

// TestImportJiraCSVMalformedFails: a CSV the reader cannot read fails the task with its
// row and column, and creates nothing.
func TestImportJiraCSVMalformedFails(t *testing.T) {
	t.Parallel()
	f := taskImportFixture(t)
	file := []byte("Summary,Issue key\nFine,A-1\n\"Broken \"quote\",A-2\n")
	m := taskWait(t, f.h, f.owner, taskImport(t, f, f.owner, "jira-csv", file))
	require.Equal(t, "FAILED", m["state"])
	e := m["errors"].([]any)[0].(map[string]any)
	require.Equal(t, "INVALID_FILE", e["code"])
	require.Equal(t, "row 3, column 9", e["item"])
	require.Empty(t, taskIssueList(t, f))

	m = taskWait(t, f.h, f.owner, taskImport(t, f, f.owner, "jira-csv", []byte("Title,Key\nx,y\n")))
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
	mapping, _ := json.Marshal(map[string]string{"octocat": f.member.Email})
	m := taskWait(t, f.h, f.owner, taskImport(t, f, f.owner, "github-json", file, atPart{"userMapping", "", "", string(mapping)}))
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	require.ElementsMatch(t, []string{"PULL_REQUEST_SKIPPED", "USER_UNMAPPED", "USER_UNMAPPED"}, taskErrorCodes(m), "%v", m["errors"])
	issues := taskIssueList(t, f)
	require.Len(t, issues, 2)
	require.Equal(t, "Crash when saving an empty draft", issues[0]["title"])
	require.Equal(t, "BUG", issues[0]["type"])
	require.Equal(t, "To Do", issues[0]["statusName"])
	require.Equal(t, f.member.ID.String(), issues[0]["assigneeId"])
	require.Equal(t, "v2.0", issues[0]["fixVersions"].([]any)[0].(map[string]any)["name"])
	require.Len(t, issues[0]["labels"], 2)
	require.Equal(t, "Done", issues[1]["statusName"])
	require.Nil(t, issues[1]["description"])
	comments := taskComments(t, f, issues[0]["key"].(string))
	require.Equal(t, []string{"Fixed by #13", "Same here &lt;b&gt;twice&lt;/b&gt;"}, comments)

	// Not JSON at all: FAILED, nothing created.
	m = taskWait(t, f.h, f.owner, taskImport(t, f, f.owner, "github-json", []byte(`{"not": "an array"}`)))
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
	before := f.h.Count("SELECT count(*) FROM labels WHERE project_id = $1", f.projectID)
	m := taskWait(t, f.h, f.owner, taskImport(t, f, f.owner, "jira-csv", file, atPart{"dryRun", "", "", "true"}))
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	require.Contains(t, taskErrorCodes(m), "USER_UNMAPPED", "no mapping: jdoe is unknown")
	dl := taskDownload(t, f.h, f.owner, m)
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
	require.Equal(t, before, f.h.Count("SELECT count(*) FROM labels WHERE project_id = $1", f.projectID))
	require.Zero(t, f.h.Count("SELECT count(*) FROM sprints WHERE project_id = $1", f.projectID))
	require.Zero(t, f.h.Count("SELECT count(*) FROM custom_fields WHERE project_id = $1", f.projectID))
}

// TestImportBadRequests: the form is checked before anything is queued.
func TestImportBadRequests(t *testing.T) {
	t.Parallel()
	f := issueFixtureNew(t)
	for _, c := range []struct {
		parts  []atPart
		reason string
	}{
		{[]atPart{atFile("a.csv", "text/csv", "x")}, "MISSING_FIELD"},
		{[]atPart{{"format", "", "", "xml"}, atFile("a.csv", "text/csv", "x")}, "INVALID_ENUM"},
		{[]atPart{{"format", "", "", "jira-csv"}}, "MISSING_FILE_PART"},
		{[]atPart{{"format", "", "", "jira-csv"}, {"dryRun", "", "", "maybe"}, atFile("a.csv", "text/csv", "x")}, "WRONG_TYPE"},
		{[]atPart{{"format", "", "", "jira-csv"}, {"userMapping", "", "", "[1]"}, atFile("a.csv", "text/csv", "x")}, "WRONG_TYPE"},
	} {
		body, ct := atBody(t, c.parts...)
		r := f.h.Do("POST", f.path("/import"), body, f.owner.Access, "Content-Type", ct)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", c.reason, r.Body)
		require.Equal(t, c.reason, r.JSON(t)["reason"])
	}
	body, ct := atBody(t, atPart{"format", "", "", "jira-csv"}, atFile("a.csv", "text/csv", "x"))
	r := f.h.Do("POST", f.path("/import"), body, f.member.Access, "Content-Type", ct)
	require.Equal(t, http.StatusForbidden, r.Status, "import needs project ADMIN")
	r = f.h.Do("POST", f.path("/import"), bytes.NewBufferString("{}").Bytes(), f.owner.Access)
	require.Equal(t, http.StatusBadRequest, r.Status)
	require.Zero(t, f.h.Count("SELECT count(*) FROM tasks WHERE project_id = $1", f.projectID))
}

// TestImportRoundTrip: an export imported into another project reproduces every issue,
// comment, label, version, sprint, custom value and attachment, compared through the API.
func TestImportRoundTrip(t *testing.T) {
	t.Parallel()
	src, keys := taskExportFixture(t)
	sprint := src.h.Do("POST", src.path("/sprints"), map[string]any{"name": "Sprint A", "goal": "Ship"}, src.owner.Access)
	require.Equal(t, http.StatusCreated, sprint.Status, "%s", sprint.Body)
	field := src.customField(t, map[string]any{"name": "Severity", "type": "DROPDOWN"})["id"].(string)
	option := src.customOption(t, field, "Sev 1", 0)
	points := src.customField(t, map[string]any{"name": "Cost", "type": "NUMBER"})["id"].(string)
	src.patch(t, keys[2], map[string]any{"sprintId": sprint.JSON(t)["id"], "statusId": src.done,
		"customFieldValues": []any{map[string]any{"fieldId": field, "value": option}, map[string]any{"fieldId": points, "value": "12.5"}}})
	sub := src.create(t, map[string]any{"title": "Child", "type": "SUBTASK", "parentId": src.get(t, keys[0])["id"]})

	r := src.h.Do("POST", src.path("/export"), nil, src.owner.Access)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	zipped := taskDownload(t, src.h, src.owner, taskWait(t, src.h, src.owner, r.JSON(t)["taskId"].(string))).Body

	// Another project on the same database, with the same people.
	dstKey, dstID := issueFixtureProject(t, src.h, src.owner)
	dst := &issueFixture{h: src.h, key: dstKey, projectID: dstID, owner: src.owner, member: src.member, viewer: src.viewer}
	dst.addMember(t, src.member, "MEMBER")
	m := taskWait(t, dst.h, dst.owner, taskImport(t, dst, dst.owner, "taskweave", zipped))
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
		atsA := src.h.Do("GET", src.path("/issues/"+a[i]["key"].(string)+"/attachments"), nil, src.owner.Access).Array(t)
		atsB := dst.h.Do("GET", dst.path("/issues/"+b[i]["key"].(string)+"/attachments"), nil, dst.owner.Access).Array(t)
		require.Len(t, atsB, len(atsA))
		for j := range atsA {
			x, y := atsA[j].(map[string]any), atsB[j].(map[string]any)
			require.Equal(t, x["filename"], y["filename"])
			dl := dst.h.Do("GET", dst.path("/issues/"+b[i]["key"].(string)+"/attachments/"+y["id"].(string)+"/download"), nil, dst.owner.Access)
			require.Equal(t, "attached bytes", string(dl.Body))
		}
	}
	require.Equal(t, b[0]["id"], b[3]["parentId"], "the subtask's parent is the imported parent")
	require.Equal(t, sub["title"], b[3]["title"])
	sprints := dst.h.Do("GET", dst.path("/sprints"), nil, dst.owner.Access).Array(t)
	require.Len(t, sprints, 1)
	require.Equal(t, "Ship", sprints[0].(map[string]any)["goal"])
	_ = time.Second
}

// TestImportUndo: a cancelled import is undone: its issues and what it created go,
// what was there before stays; a second undo is 409.
func TestImportUndo(t *testing.T) {
	t.Parallel()
	f := taskImportFixture(t)
	keep := f.label(t, "frontend")
	pre := taskIssues(t, f, 1, nil)
	file, err := os.ReadFile("testdata/import/jira.csv")
	require.NoError(t, err)
	id := taskImport(t, f, f.owner, "jira-csv", file)
	m := taskWait(t, f.h, f.owner, id)
	require.Equal(t, "SUCCEEDED", m["state"])
	r := f.h.Do("POST", "/api/v1/tasks/"+id+"/undo", nil, f.owner.Access)
	require.Equal(t, http.StatusConflict, r.Status, "a succeeded import is not undone")
	// Make it look cancelled after its first batch, as a cancel mid-import leaves it.
	_, err = f.h.DB.Pool.Exec(t.Context(), "UPDATE tasks SET state = 'CANCELLED' WHERE id = $1", id)
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, f.h.Do("POST", "/api/v1/tasks/"+id+"/undo", nil, f.member.Access).Status)
	r = f.h.Do("POST", "/api/v1/tasks/"+id+"/undo", nil, f.owner.Access)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	u := taskWait(t, f.h, f.owner, r.JSON(t)["taskId"].(string))
	require.Equal(t, "SUCCEEDED", u["state"], "%v", u)
	require.Equal(t, "UNDO", u["kind"])
	require.Equal(t, map[string]any{"done": 3.0, "total": 3.0, "failed": 0.0}, u["progress"])

	issues := taskIssueList(t, f)
	require.Len(t, issues, 1)
	require.Equal(t, pre[0], issues[0]["key"])
	require.Equal(t, 1, f.h.Count("SELECT count(*) FROM labels WHERE project_id = $1", f.projectID), "only the label of before")
	require.Equal(t, 1, f.h.Count("SELECT count(*) FROM labels WHERE id = $1", keep))
	require.Zero(t, f.h.Count("SELECT count(*) FROM sprints WHERE project_id = $1", f.projectID))
	require.Zero(t, f.h.Count("SELECT count(*) FROM custom_fields WHERE project_id = $1", f.projectID))
	require.Zero(t, f.h.Count("SELECT count(*) FROM versions WHERE project_id = $1", f.projectID))
	require.Equal(t, http.StatusConflict, f.h.Do("POST", "/api/v1/tasks/"+id+"/undo", nil, f.owner.Access).Status)
}

// TestImportResumesAfterWorkerStopsWithoutDuplicates: a worker stopped mid-import (its
// running batch cancelled and rolled back) leaves the committed batches; another worker
// resumes from the cursor and every row becomes exactly one issue.
func TestImportResumesAfterWorkerStopsWithoutDuplicates(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := issueFixtureOn(t, h)
	const n = 400
	var csv strings.Builder
	csv.WriteString("Summary,Issue key,Labels,Comment\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&csv, "\"Imported, number %d\",OLD-%d,bulk,\"01/Jan/24 9:00 AM;someone;line one\nline two\"\n", i, i)
	}
	id := taskImport(t, f, f.owner, "jira-csv", []byte(csv.String()))

	stop := taskWorkerClient(t, h)
	taskCursorPast(t, h, id, 50)
	stop(true)
	cursor := h.Count("SELECT cursor FROM tasks WHERE id = $1", id)
	require.Less(t, cursor, n, "the worker was stopped mid-import")
	require.Equal(t, cursor, h.Count("SELECT count(*) FROM issues WHERE project_id = $1", f.projectID),
		"what the cursor says is what was created")

	taskWorkerClient(t, h)
	m := taskWait(t, h, f.owner, id)
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	require.Equal(t, n, h.Count("SELECT count(*) FROM issues WHERE project_id = $1", f.projectID))
	require.Equal(t, n, h.Count("SELECT count(DISTINCT source_key) FROM issue_imports WHERE task_id = $1", id), "no row twice")
	require.Equal(t, n, h.Count("SELECT count(*) FROM comments c JOIN issues i ON i.id = c.issue_id WHERE i.project_id = $1", f.projectID))
	require.Equal(t, n, h.Count("SELECT max(number) FROM issues WHERE project_id = $1", f.projectID), "keys continue without gaps")
}
