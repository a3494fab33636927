package work_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestIssueMembersTakeKeys: a body member naming an issue takes its key as well as its
// id, as paths do; an unknown key is the same 404 as an unknown id, anything else 400.
func TestIssueMembersTakeKeys(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)
	parent := f.Create(t, map[string]any{"title": "Parent"})
	key := parent["key"].(string)

	sub := f.Create(t, map[string]any{"title": "By key", "type": "SUBTASK", "parentId": key})
	require.Equal(t, parent["id"], sub["parentId"])
	lower := f.Create(t, map[string]any{"title": "By lower-case key", "type": "SUBTASK", "parentId": strings.ToLower(key)})
	require.Equal(t, parent["id"], lower["parentId"], "keys are case-insensitive, as in paths")
	byID := f.Create(t, map[string]any{"title": "By id", "type": "SUBTASK", "parentId": parent["id"]})
	require.Equal(t, parent["id"], byID["parentId"])

	apitest.RequireProblem(t, h.Do("POST", f.Path("/issues"), map[string]any{"title": "Orphan", "parentId": f.Key + "-999"}, f.Owner.Access),
		http.StatusNotFound, "NOT_FOUND", apitest.Reason("PARENT_NOT_FOUND"))
	other := apitest.NewProject(t, h)
	foreign := other.Create(t, map[string]any{"title": "Elsewhere"})
	apitest.RequireProblem(t, h.Do("POST", f.Path("/issues"), map[string]any{"title": "Foreign", "parentId": foreign["key"]}, f.Owner.Access),
		http.StatusNotFound, "NOT_FOUND", apitest.Reason("PARENT_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("POST", f.Path("/issues"), map[string]any{"title": "Bad", "parentId": "not a ref"}, f.Owner.Access),
		http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))

	inc := h.Do("POST", f.Path("/incidents"), map[string]any{"issueId": key, "severity": "P2"}, f.Member.Access)
	require.Equal(t, http.StatusCreated, inc.Status, "%s", inc.Body)
	require.Equal(t, parent["id"], inc.JSON(t)["issueId"])
	apitest.RequireProblem(t, h.Do("POST", f.Path("/incidents"), map[string]any{"issueId": foreign["key"], "severity": "P1"}, f.Member.Access),
		http.StatusNotFound, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
}
