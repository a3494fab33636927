package work_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// taskExportFixture is a project with labelled, commented issues and an attachment,
// its workers running with the harness's attachment storage.
func taskExportFixture(t *testing.T) (*apitest.Project, []string) {
	t.Helper()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	taskWorkerClient(t, h)
	label := f.Label(t, "backend")
	version := f.Version(t, "1.0")
	keys := taskIssues(t, f, 3, func(i int) map[string]any {
		if i == 0 {
			return map[string]any{"labelIds": []string{label}, "assigneeId": f.Member.ID, "description": "Line one\nline \"two\", with comma",
				"storyPoints": 5}
		}
		return nil
	})
	f.Patch(t, keys[0], map[string]any{"fixVersionIds": []string{version}})
	r := h.Do("POST", f.Path("/issues/"+keys[0]+"/comments"), map[string]any{"body": "First comment"}, f.Member.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	body, ct := apitest.MultipartBody(t, apitest.FilePart("notes.txt", "text/plain", "attached bytes"))
	r = h.Do("POST", f.Path("/issues/"+keys[1]+"/attachments"), body, f.Member.Access, "Content-Type", ct)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return f, keys
}

// taskDownload fetches a finished task's result.
func taskDownload(t *testing.T, h *apitest.Harness, u apitest.User, m map[string]any) *apitest.Response {
	t.Helper()
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	r := h.Do("GET", m["resultUrl"].(string), nil, u.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Contains(t, r.Header.Get("Content-Disposition"), "attachment; filename=")
	return r
}

// TestExportZip: the zip holds project.json, issues.ndjson, the attachment files and a
// manifest whose counts and SHA-256 sums match the files.
func TestExportZip(t *testing.T) {
	t.Parallel()
	f, keys := taskExportFixture(t)
	r := f.H.Do("POST", f.Path("/export"), nil, f.Member.Access)
	require.Equal(t, http.StatusForbidden, r.Status, "export needs project ADMIN")
	r = f.H.Do("POST", f.Path("/export?format=pdf"), nil, f.Owner.Access)
	require.Equal(t, http.StatusBadRequest, r.Status)
	r = f.H.Do("POST", f.Path("/export"), nil, f.Owner.Access)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	id := r.JSON(t)["taskId"].(string)
	m := taskWait(t, f.H, f.Owner, id)
	require.Equal(t, map[string]any{"done": 3.0, "total": 3.0, "failed": 0.0}, m["progress"])
	require.Equal(t, http.StatusNotFound, f.H.Do("GET", "/api/v1/tasks/"+id+"/result", nil, f.Member.Access).Status)
	dl := taskDownload(t, f.H, f.Owner, m)
	require.Equal(t, "application/zip", dl.Header.Get("Content-Type"))

	zr, err := zip.NewReader(bytes.NewReader(dl.Body), int64(len(dl.Body)))
	require.NoError(t, err)
	files := map[string][]byte{}
	for _, zf := range zr.File {
		rc, err := zf.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		files[zf.Name] = b
	}
	var manifest struct {
		Counts map[string]int
		Files  map[string]struct {
			SHA256 string `json:"sha256"`
			Bytes  int
		}
	}
	require.NoError(t, json.Unmarshal(files["manifest.json"], &manifest))
	require.Equal(t, map[string]int{"issues": 3, "comments": 1, "attachments": 1}, manifest.Counts)
	require.Len(t, manifest.Files, 3)
	for name, sum := range manifest.Files {
		got := sha256.Sum256(files[name])
		require.Equal(t, sum.SHA256, hex.EncodeToString(got[:]), name)
		require.Equal(t, sum.Bytes, len(files[name]), name)
		if strings.HasPrefix(name, "attachments/") {
			require.Equal(t, "attached bytes", string(files[name]))
		}
	}

	var proj map[string]any
	require.NoError(t, json.Unmarshal(files["project.json"], &proj))
	require.Equal(t, f.Key, proj["project"].(map[string]any)["key"])
	require.Equal(t, []any{map[string]any{"name": "backend", "color": "#112233"}}, proj["labels"])
	require.Len(t, proj["members"], 3, "owner, member and viewer")
	lines := strings.Split(strings.TrimSpace(string(files["issues.ndjson"])), "\n")
	require.Len(t, lines, 3)
	var first map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.Equal(t, keys[0], first["key"])
	require.Equal(t, []any{"backend"}, first["labels"])
	require.Equal(t, []any{"1.0"}, first["fixVersions"])
	require.Equal(t, f.Member.Email, first["assignee"])
	require.Equal(t, "First comment", first["comments"].([]any)[0].(map[string]any)["body"])
	require.NotEmpty(t, first["activity"])
}

// TestExportCSV: one row per issue under the list's columns, quoting intact.
func TestExportCSV(t *testing.T) {
	t.Parallel()
	f, keys := taskExportFixture(t)
	r := f.H.Do("POST", f.Path("/export?format=csv"), nil, f.Owner.Access)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	m := taskWait(t, f.H, f.Owner, r.JSON(t)["taskId"].(string))
	dl := taskDownload(t, f.H, f.Owner, m)
	require.Equal(t, "text/csv; charset=utf-8", dl.Header.Get("Content-Type"))
	rows, err := csv.NewReader(bytes.NewReader(dl.Body)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 4)
	require.Equal(t, []string{"key", "title", "type", "status", "priority", "assignee", "reporter", "storyPoints",
		"dueDate", "sprint", "labels", "fixVersions", "parent", "createdAt", "updatedAt"}, rows[0])
	require.Equal(t, keys[0], rows[1][0])
	require.Equal(t, "To Do", rows[1][3])
	require.Equal(t, f.Member.Email, rows[1][5])
	require.Equal(t, "5", rows[1][7])
	require.Equal(t, "backend", rows[1][10])
	require.Equal(t, "1.0", rows[1][11])
}
