package work_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// taskStripIDs drops every "id" member (and the ids that only link), so two projects'
// rules compare.
func taskStripIDs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if k != "id" {
				out[k] = taskStripIDs(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = taskStripIDs(x[i])
		}
		return out
	}
	return v
}

// taskWithGhostMember rewrites the export's project.json with one more member, an
// e-mail no user here has.
func taskWithGhostMember(t *testing.T, zipped []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	require.NoError(t, err)
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		require.NoError(t, err)
		rc.Close()
		if f.Name == "project.json" {
			var pj map[string]any
			require.NoError(t, json.Unmarshal(data, &pj))
			pj["members"] = append(pj["members"].([]any), map[string]any{"email": "ghost@example.com", "role": "MEMBER"})
			data, err = json.Marshal(pj)
			require.NoError(t, err)
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: f.Method})
		require.NoError(t, err)
		_, err = w.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return out.Bytes()
}

// TestImportRoundTripProjectSettings: the taskweave format brings project.json's
// settings into a project without issues, compared through the API: the members who
// are users here (another is an item error), the workflow's statuses and transitions,
// the automation rules (DISABLED and the importer's) and the desk's SLA policies.
func TestImportRoundTripProjectSettings(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	src := apitest.NewProject(t, h)
	taskWorkerClient(t, h)
	src.Create(t, map[string]any{"title": "One issue"})

	wf := h.Do("GET", src.Path("/workflow"), nil, src.Owner.Access).JSON(t)
	var todo string
	for _, s := range wf["statuses"].([]any) {
		if s := s.(map[string]any); s["category"] == "TODO" {
			todo = s["id"].(string)
		}
	}
	r := h.Do("POST", src.Path("/workflow/statuses"), map[string]any{"name": "In Review", "category": "IN_PROGRESS"}, src.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	review := r.JSON(t)["id"].(string)
	r = h.Do("POST", src.Path("/workflow/transitions"), map[string]any{"fromStatusId": todo, "toStatusId": review}, src.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r = h.Do("POST", src.Path("/automation/rules"), map[string]any{"name": "Escalate bugs", "triggerType": "ISSUE_CREATED",
		"conditions": []any{map[string]any{"type": "ISSUE_TYPE", "operator": "IS", "params": map[string]any{"value": "bug"}}},
		"actions":    []any{map[string]any{"type": "SET_PRIORITY", "params": map[string]any{"priority": "CRITICAL"}}}}, src.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	srcRule := r.JSON(t)
	require.Equal(t, true, srcRule["enabled"])
	r = h.Do("POST", src.Path("/service-desk/enable"), map[string]any{"emailAddress": nil}, src.Owner.Access)
	require.Less(t, r.Status, 300, "%s", r.Body)
	r = h.Do("POST", src.Path("/service-desk/sla-policies"), map[string]any{"name": "High SLA", "priority": "HIGH",
		"responseMinutes": 30, "resolutionMinutes": 240}, src.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	r = h.Do("POST", src.Path("/export"), nil, src.Owner.Access)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	zipped := taskDownload(t, h, src.Owner, taskWait(t, h, src.Owner, r.JSON(t)["taskId"].(string))).Body
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	require.NoError(t, err)
	for _, f := range zr.File {
		if f.Name == "project.json" {
			rc, err := f.Open()
			require.NoError(t, err)
			raw, _ := io.ReadAll(rc)
			rc.Close()
			require.NotContains(t, string(raw), "email_code", "the desk's verification state stays home")
		}
	}

	// The member of the source owns the target (and imports): the source's owner and
	// viewer come in as members.
	dstKey, dstID := apitest.CreateProject(t, h, src.Member)
	dst := &apitest.Project{H: h, Key: dstKey, ProjectID: dstID, Owner: src.Member}
	r = h.Do("POST", dst.Path("/service-desk/enable"), map[string]any{"emailAddress": nil}, src.Member.Access)
	require.Less(t, r.Status, 300, "%s", r.Body)
	// A status the export lacks goes from a project without issues.
	r = h.Do("POST", dst.Path("/workflow/statuses"), map[string]any{"name": "Parked", "category": "TODO"}, src.Member.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	// A dry run reports the settings' problems and changes nothing.
	m := taskWait(t, h, src.Member, taskImport(t, dst, src.Member, "taskweave", taskWithGhostMember(t, zipped),
		apitest.Part{Name: "dryRun", Data: "true"}))
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	require.Equal(t, []string{"MEMBER_NOT_FOUND"}, taskErrorCodes(m), "%v", m["errors"])
	require.Equal(t, 1, h.Count("SELECT count(*) FROM project_members WHERE project_id = $1", dstID), "the owner's row only")
	require.Zero(t, h.Count("SELECT count(*) FROM automation_rules WHERE project_id = $1", dstID))
	require.Zero(t, h.Count("SELECT count(*) FROM sla_policies p JOIN service_desks d ON d.id = p.service_desk_id WHERE d.project_id = $1", dstID))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM workflow_statuses s JOIN projects p ON p.workflow_id = s.workflow_id
		WHERE p.id = $1 AND s.name = 'Parked'`, dstID))
	require.Zero(t, h.Count("SELECT count(*) FROM labels WHERE project_id = $1", dstID))

	m = taskWait(t, h, src.Member, taskImport(t, dst, src.Member, "taskweave", taskWithGhostMember(t, zipped)))
	require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	require.Equal(t, []string{"MEMBER_NOT_FOUND"}, taskErrorCodes(m), "%v", m["errors"])
	require.Equal(t, "member ghost@example.com", m["errors"].([]any)[0].(map[string]any)["item"])

	roles := func(f *apitest.Project, token string) map[string]string {
		r := h.Do("GET", f.Path("/members"), nil, token)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var list []any
		var v any
		require.NoError(t, json.Unmarshal(r.Body, &v))
		if page, ok := v.(map[string]any); ok {
			list = page["content"].([]any)
		} else {
			list = v.([]any)
		}
		out := map[string]string{}
		for _, x := range list {
			x := x.(map[string]any)
			out[x["user"].(map[string]any)["email"].(string)] = x["role"].(string)
		}
		return out
	}
	require.Equal(t, map[string]string{src.Owner.Email: "ADMIN", src.Member.Email: "MEMBER", src.Viewer.Email: "VIEWER"},
		roles(src, src.Owner.Access))
	require.Equal(t, map[string]string{src.Owner.Email: "ADMIN", src.Member.Email: "ADMIN", src.Viewer.Email: "VIEWER"},
		roles(dst, src.Member.Access), "the source's owner comes in as an ADMIN, the viewer as a VIEWER; the importer owns the project")

	shape := func(f *apitest.Project, token string) ([]string, []string) {
		wf := h.Do("GET", f.Path("/workflow"), nil, token).JSON(t)
		names := map[string]string{}
		var statuses, transitions []string
		for _, s := range wf["statuses"].([]any) {
			s := s.(map[string]any)
			names[s["id"].(string)] = s["name"].(string)
			statuses = append(statuses, s["name"].(string)+" "+s["category"].(string))
		}
		for _, tr := range wf["transitions"].([]any) {
			tr := tr.(map[string]any)
			from := "any"
			if id, ok := tr["fromStatusId"].(string); ok {
				from = names[id]
			}
			transitions = append(transitions, from+" -> "+names[tr["toStatusId"].(string)])
		}
		sort.Strings(transitions)
		return statuses, transitions
	}
	srcStatuses, srcTransitions := shape(src, src.Owner.Access)
	dstStatuses, dstTransitions := shape(dst, src.Member.Access)
	require.Contains(t, srcStatuses, "In Review IN_PROGRESS")
	require.Equal(t, srcStatuses, dstStatuses, "the statuses, in order")
	require.NotEmpty(t, srcTransitions)
	require.Equal(t, srcTransitions, dstTransitions)

	// Into a project with issues the workflow is merged: its own status stays, the
	// export's missing status and transitions are added, nothing twice.
	keepKey, keepID := apitest.CreateProject(t, h, src.Member)
	keep := &apitest.Project{H: h, Key: keepKey, ProjectID: keepID, Owner: src.Member}
	r = h.Do("POST", keep.Path("/workflow/statuses"), map[string]any{"name": "Parked", "category": "TODO"}, src.Member.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	keep.Create(t, map[string]any{"title": "Already here"})
	for range 2 {
		m = taskWait(t, h, src.Member, taskImport(t, keep, src.Member, "taskweave", zipped))
		require.Equal(t, "SUCCEEDED", m["state"], "%v", m)
	}
	keepStatuses, keepTransitions := shape(keep, src.Member.Access)
	require.Contains(t, keepStatuses, "Parked TODO")
	require.Subset(t, keepStatuses, srcStatuses)
	require.Len(t, keepStatuses, len(srcStatuses)+1)
	require.Equal(t, srcTransitions, keepTransitions, "the export's transitions, once each")

	r = h.Do("GET", dst.Path("/automation/rules"), nil, src.Member.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	rules := r.JSON(t)["content"].([]any)
	require.Len(t, rules, 1)
	got := rules[0].(map[string]any)
	require.Equal(t, false, got["enabled"], "imported rules start DISABLED")
	require.Equal(t, src.Member.ID.String(), got["createdBy"], "and act as the importer, never as their author elsewhere")
	require.Equal(t, taskStripIDs(srcRule["rootGroup"]), taskStripIDs(got["rootGroup"]))
	require.Equal(t, taskStripIDs(srcRule["actions"]), taskStripIDs(got["actions"]))
	require.Equal(t, srcRule["name"], got["name"])
	require.Equal(t, srcRule["triggerType"], got["triggerType"])

	r = h.Do("GET", dst.Path("/service-desk/sla-policies"), nil, src.Member.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var policies []map[string]any
	var v any
	require.NoError(t, json.Unmarshal(r.Body, &v))
	list, ok := v.([]any)
	if !ok {
		list = v.(map[string]any)["content"].([]any)
	}
	for _, p := range list {
		p := p.(map[string]any)
		policies = append(policies, map[string]any{"name": p["name"], "priority": p["priority"],
			"responseMinutes": p["responseMinutes"], "resolutionMinutes": p["resolutionMinutes"]})
	}
	require.Equal(t, []map[string]any{{"name": "High SLA", "priority": "HIGH", "responseMinutes": 30.0, "resolutionMinutes": 240.0}}, policies)
}
