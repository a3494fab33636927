package project_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestLabels(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	owner, writer, viewer := h.Register("Owner"), h.Register("Writer"), h.Register("Viewer")
	key := apitest.PostProject(t, h, owner.Access)
	apitest.PostMember(t, h, owner.Access, key, writer.ID, "MEMBER")
	apitest.PostMember(t, h, owner.Access, key, viewer.ID, "VIEWER")
	path := "/api/v1/projects/" + key + "/labels"

	require.Empty(t, h.Do("GET", path, nil, viewer.Access).Array(t))
	r := h.Do("POST", path, map[string]any{"name": " bug ", "color": "#D73A4a"}, writer.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	bug := r.JSON(t)
	require.Equal(t, "bug", bug["name"])
	require.Equal(t, "#D73A4a", bug["color"])
	require.Len(t, bug, 3)
	id := bug["id"].(string)
	require.Equal(t, http.StatusCreated, h.Do("POST", path, map[string]any{"name": "api", "color": "#000000"}, owner.Access).Status)

	list := h.Do("GET", path, nil, viewer.Access).Array(t)
	require.Len(t, list, 2)
	require.Equal(t, "api", list[0].(map[string]any)["name"], "by name")

	apitest.RequireProblem(t, h.Do("POST", path, map[string]any{"name": "bug", "color": "#ffffff"}, writer.Access), http.StatusConflict, "CONFLICT", apitest.Reason("DUPLICATE_NAME"))
	apitest.RequireProblem(t, h.Do("PUT", path+"/"+id, map[string]any{"name": "api"}, writer.Access), http.StatusConflict, "CONFLICT", apitest.Reason("DUPLICATE_NAME"))

	r = h.Do("PUT", path+"/"+id, map[string]any{"color": "#00ff00"}, writer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, map[string]any{"id": id, "name": "bug", "color": "#00ff00"}, r.JSON(t), "absent name unchanged")
	r = h.Do("PUT", path+"/"+id, map[string]any{"name": "defect", "color": "#0000ff"}, writer.Access)
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, map[string]any{"id": id, "name": "defect", "color": "#0000ff"}, r.JSON(t))
	r = h.Do("PUT", path+"/"+id, map[string]any{}, writer.Access)
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "defect", r.JSON(t)["name"])

	// VIEWERs read only.
	apitest.RequireProblem(t, h.Do("POST", path, map[string]any{"name": "v", "color": "#000000"}, viewer.Access), http.StatusForbidden, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("PUT", path+"/"+id, map[string]any{"name": "v"}, viewer.Access), http.StatusForbidden, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("DELETE", path+"/"+id, nil, viewer.Access), http.StatusForbidden, "FORBIDDEN", apitest.NoReason)

	// A label of another project is not found there.
	other := apitest.PostProject(t, h, owner.Access)
	otherPath := "/api/v1/projects/" + other + "/labels/" + id
	apitest.RequireProblem(t, h.Do("PUT", otherPath, map[string]any{"name": "stolen"}, owner.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("LABEL_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("PUT", otherPath, map[string]any{}, owner.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("LABEL_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("DELETE", otherPath, nil, owner.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("LABEL_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("DELETE", path+"/"+uuid.NewString(), nil, owner.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("LABEL_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("PUT", path+"/x", map[string]any{"name": "x"}, owner.Access), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	require.Equal(t, "defect", h.Do("GET", path, nil, owner.Access).Array(t)[1].(map[string]any)["name"])

	r = h.Do("DELETE", path+"/"+id, nil, writer.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	require.Len(t, h.Do("GET", path, nil, owner.Access).Array(t), 1)
	apitest.RequireProblem(t, h.Do("DELETE", path+"/"+id, nil, writer.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("LABEL_NOT_FOUND"))
}

func TestLabelValidation(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	owner := h.Register("Owner")
	key := apitest.PostProject(t, h, owner.Access)
	path := "/api/v1/projects/" + key + "/labels"
	for _, c := range []struct {
		body  any
		code  string
		field string
		// reason is the problem's reason; "" for none.
		reason string
	}{
		{map[string]any{"color": "#000000"}, "BAD_REQUEST", "", "MISSING_FIELD"},
		{map[string]any{"name": "x"}, "BAD_REQUEST", "", "MISSING_FIELD"},
		{map[string]any{"name": 1, "color": "#000000"}, "BAD_REQUEST", "", "WRONG_TYPE"},
		{"[]", "BAD_REQUEST", "", "MALFORMED_JSON"},
		{map[string]any{"name": " ", "color": "#000000"}, "VALIDATION_ERROR", "name", ""},
		{map[string]any{"name": strings.Repeat("l", 51), "color": "#000000"}, "VALIDATION_ERROR", "name", ""},
		{map[string]any{"name": "x", "color": "red"}, "VALIDATION_ERROR", "color", ""},
		{map[string]any{"name": "x", "color": "#12345"}, "VALIDATION_ERROR", "color", ""},
		{map[string]any{"name": "x", "color": "#1234567"}, "VALIDATION_ERROR", "color", ""},
		{map[string]any{"name": "x", "color": "#gggggg"}, "VALIDATION_ERROR", "color", ""},
		{map[string]any{"name": "x\x00", "color": "#000000"}, "VALIDATION_ERROR", "name", "NUL_CHARACTER"},
	} {
		m := apitest.RequireProblem(t, h.Do("POST", path, c.body, owner.Access), http.StatusBadRequest, c.code, apitest.ReasonOrNone(c.reason))
		if c.field != "" {
			require.Contains(t, m["details"], c.field)
		}
	}
	require.Equal(t, http.StatusCreated, h.Do("POST", path, map[string]any{"name": strings.Repeat("l", 50), "color": "#abcdef"}, owner.Access).Status)
	id := h.Do("GET", path, nil, owner.Access).Array(t)[0].(map[string]any)["id"].(string)
	apitest.RequireProblem(t, h.Do("PUT", path+"/"+id, map[string]any{"color": "blue"}, owner.Access), http.StatusBadRequest, "VALIDATION_ERROR", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("PUT", path+"/"+id, map[string]any{"name": ""}, owner.Access), http.StatusBadRequest, "VALIDATION_ERROR", apitest.NoReason)
	require.Len(t, h.Do("GET", path, nil, owner.Access).Array(t), 1)
	require.Equal(t, "#abcdef", h.Do("GET", path, nil, owner.Access).Array(t)[0].(map[string]any)["color"])
}
