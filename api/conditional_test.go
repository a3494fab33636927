package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestETagAndIfNoneMatch: the polled replies carry an ETag; If-None-Match naming it is
// 304 without a body until the resource changes.
func TestETagAndIfNoneMatch(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	sf := apitest.NewSprintProject(t, h)
	f := sf.Project
	iss := f.Create(t, map[string]any{"title": "Tagged"})
	key := iss["key"].(string)
	sprint := sf.NewSprint(t, map[string]any{"name": "Polled"})
	sf.Put(t, sprint["id"].(string), key)
	sf.Start(t, sprint["id"].(string))

	for _, path := range []string{f.Path("/issues/" + key), f.Path("/issues"), f.Path("/board"), f.Path(""),
		"/api/v1/projects", f.Path("/workflow"), f.Path("/issues/" + key + "/comments")} {
		r := h.Do("GET", path, nil, f.Owner.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
		tag := r.Header.Get("ETag")
		require.Regexp(t, `^W/"[A-Za-z0-9_-]+"$`, tag, path)
		same := h.Do("GET", path, nil, f.Owner.Access, "If-None-Match", tag)
		require.Equal(t, http.StatusNotModified, same.Status, path)
		require.Empty(t, same.Body, path)
		require.Equal(t, tag, same.Header.Get("ETag"), path)
		other := h.Do("GET", path, nil, f.Owner.Access, "If-None-Match", `W/"other"`)
		require.Equal(t, http.StatusOK, other.Status, path)
		require.NotEmpty(t, other.Body, path)
	}

	before := h.Do("GET", f.Path("/issues/"+key), nil, f.Owner.Access).Header.Get("ETag")
	f.Patch(t, key, map[string]any{"title": "Tagged again"})
	after := h.Do("GET", f.Path("/issues/"+key), nil, f.Owner.Access, "If-None-Match", before)
	require.Equal(t, http.StatusOK, after.Status, "a changed issue is sent again")
	require.NotEqual(t, before, after.Header.Get("ETag"))
}

// TestIfMatchGuardsChanges: a change sent with the tag the client read succeeds; one
// sent with a tag of a state since changed is 412 and changes nothing. Without If-Match
// changes go through as ever.
func TestIfMatchGuardsChanges(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)
	key := f.Create(t, map[string]any{"title": "Guarded"})["key"].(string)
	path := f.Path("/issues/" + key)

	read := h.Do("GET", path, nil, f.Owner.Access).Header.Get("ETag")
	ok := h.Do("PATCH", path, map[string]any{"title": "First writer"}, f.Owner.Access, "If-Match", read)
	require.Equal(t, http.StatusOK, ok.Status, "%s", ok.Body)
	lost := h.Do("PATCH", path, map[string]any{"title": "Second writer"}, f.Member.Access, "If-Match", read)
	apitest.RequireProblem(t, lost, http.StatusPreconditionFailed, "PRECONDITION_FAILED", apitest.NoReason)
	require.Equal(t, "First writer", f.Get(t, key)["title"])
	require.Equal(t, http.StatusOK, h.Do("PATCH", path, map[string]any{"title": "Any"}, f.Member.Access, "If-Match", "*").Status)
	require.Equal(t, http.StatusOK, h.Do("PATCH", path, map[string]any{"title": "Blind"}, f.Member.Access).Status)
	apitest.RequireProblem(t, h.Do("DELETE", path, nil, f.Owner.Access, "If-Match", read),
		http.StatusPreconditionFailed, "PRECONDITION_FAILED", apitest.NoReason)
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", path, nil, f.Owner.Access,
		"If-Match", h.Do("GET", path, nil, f.Owner.Access).Header.Get("ETag")).Status)

	// A comment: its tag is that of its create and edit replies.
	key = f.Create(t, map[string]any{"title": "Commented"})["key"].(string)
	cm := h.Do("POST", f.Path("/issues/"+key+"/comments"), map[string]any{"body": "first"}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, cm.Status, "%s", cm.Body)
	cmPath := f.Path("/issues/" + key + "/comments/" + cm.JSON(t)["id"].(string))
	created := cm.Header.Get("ETag")
	require.NotEmpty(t, created)
	edited := h.Do("PUT", cmPath, map[string]any{"body": "second"}, f.Owner.Access, "If-Match", created)
	require.Equal(t, http.StatusOK, edited.Status, "%s", edited.Body)
	require.NotEqual(t, created, edited.Header.Get("ETag"))
	again := h.Do("PUT", cmPath, map[string]any{"body": "third"}, f.Owner.Access, "If-Match", edited.Header.Get("ETag"))
	require.Equal(t, http.StatusOK, again.Status, "the edit reply's tag is the comment's: %s", again.Body)
	stale := h.Do("PUT", cmPath, map[string]any{"body": "third"}, f.Owner.Access, "If-Match", created)
	apitest.RequireProblem(t, stale, http.StatusPreconditionFailed, "PRECONDITION_FAILED", apitest.NoReason)

	// The workflow: a status renamed since the client read the workflow.
	wf := h.Do("GET", f.Path("/workflow"), nil, f.Owner.Access).Header.Get("ETag")
	require.Equal(t, http.StatusOK, h.Do("PUT", f.Path("/workflow/statuses/"+f.Prog.String()), map[string]any{"name": "Doing"},
		f.Owner.Access, "If-Match", wf).Status)
	apitest.RequireProblem(t, h.Do("PUT", f.Path("/workflow/statuses/"+f.Done.String()), map[string]any{"name": "Shipped"},
		f.Owner.Access, "If-Match", wf), http.StatusPreconditionFailed, "PRECONDITION_FAILED", apitest.NoReason)

	// A rule.
	rule := h.Do("POST", f.Path("/automation/rules"), map[string]any{"name": "Tagged rule", "triggerType": "ISSUE_CREATED"}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, rule.Status, "%s", rule.Body)
	rulePath := f.Path("/automation/rules/" + rule.JSON(t)["id"].(string))
	rt := h.Do("GET", rulePath, nil, f.Owner.Access).Header.Get("ETag")
	require.Equal(t, http.StatusOK, h.Do("PUT", rulePath, map[string]any{"name": "Renamed rule"}, f.Owner.Access, "If-Match", rt).Status)
	apitest.RequireProblem(t, h.Do("DELETE", rulePath, nil, f.Owner.Access, "If-Match", rt),
		http.StatusPreconditionFailed, "PRECONDITION_FAILED", apitest.NoReason)
}
