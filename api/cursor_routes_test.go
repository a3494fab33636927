package api_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// pagedSchema is true when s is a page object (it has nextCursor, directly or through
// allOf).
func pagedSchema(s *openapi3.SchemaRef) bool {
	if s == nil || s.Value == nil {
		return false
	}
	if _, ok := s.Value.Properties["nextCursor"]; ok {
		return true
	}
	for _, a := range s.Value.AllOf {
		if pagedSchema(a) {
			return true
		}
	}
	return false
}

var docParam = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// TestEveryPagedListTakesCursor: every operation of the document that answers a page
// declares `cursor`, and on a server answers `cursor=` with a page carrying nextCursor,
// follows that cursor to the next page, and refuses a cursor it did not hand out with
// 400 INVALID_CURSOR.
func TestEveryPagedListTakesCursor(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	h.MakeAdmin(f.Owner)
	var issueKey string
	for i := range 3 {
		iss := f.Create(t, map[string]any{"title": "Paged"})
		issueKey = iss["key"].(string)
		f.Patch(t, issueKey, map[string]any{"priority": []string{"LOW", "HIGH", "CRITICAL"}[i]})
		r := h.Do("POST", f.Path("/issues/"+issueKey+"/comments"), map[string]any{"body": "c"}, f.Owner.Access)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	}
	for range 2 {
		f.Patch(t, issueKey, map[string]any{"title": "Paged again " + uuid.NewString()[:4]})
		r := h.Do("POST", f.Path("/issues/"+issueKey+"/comments"), map[string]any{"body": "c"}, f.Owner.Access)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	}
	rule := map[string]any{"name": "r", "triggerType": "ISSUE_CREATED",
		"actions": []any{map[string]any{"type": "SET_PRIORITY", "params": map[string]any{"priority": "HIGH"}}}}
	var projectRule, systemRule string
	for range 3 {
		r := h.Do("POST", f.Path("/automation/rules"), rule, f.Owner.Access)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		projectRule = r.JSON(t)["id"].(string)
		r = h.Do("POST", "/api/v1/admin/automation/rules", rule, f.Owner.Access)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		systemRule = r.JSON(t)["id"].(string)
	}

	doc := loadOpenAPI(t)
	paged, followed := 0, 0
	for path, item := range doc.Paths.Map() {
		op := item.Get
		if op == nil || op.Responses.Status(200) == nil || op.Responses.Status(200).Value.Content.Get("application/json") == nil ||
			!pagedSchema(op.Responses.Status(200).Value.Content.Get("application/json").Schema) {
			continue
		}
		paged++
		declared := false
		for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
			declared = declared || (p.Value.Name == "cursor" && p.Value.In == "query")
		}
		require.True(t, declared, "%s declares cursor", path)

		target := docParam.ReplaceAllStringFunc(path, func(m string) string {
			switch m {
			case "{key}":
				return f.Key
			case "{issueKey}":
				return issueKey
			case "{rid}":
				if strings.HasPrefix(path, "/api/v1/admin/") {
					return systemRule
				}
				return projectRule
			}
			return uuid.NewString()
		})
		if path == "/api/v1/search" {
			target += "?q=paged&" // the search's required query; its hits walk by position
		} else {
			target += "?"
		}
		r := h.Do("GET", target+"size=1&cursor=", nil, f.Owner.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
		m := r.JSON(t)
		next, ok := m["nextCursor"]
		require.True(t, ok, "%s sends nextCursor", path)
		require.Equal(t, true, m["first"], path)
		if next != nil {
			followed++
			r2 := h.Do("GET", target+"size=1&cursor="+url.QueryEscape(next.(string)), nil, f.Owner.Access)
			require.Equal(t, http.StatusOK, r2.Status, "%s: %s", path, r2.Body)
			m2 := r2.JSON(t)
			require.Equal(t, false, m2["first"], path)
			require.NotEmpty(t, m2["content"], "%s: a cursor is handed out only when rows follow", path)
			require.NotEqual(t, m["content"], m2["content"], "%s: the next page is another row", path)
		} else {
			require.Equal(t, true, m["last"], path)
		}
		apitest.RequireProblem(t, h.Do("GET", target+"cursor=bm90LW9uZS1vZi1vdXJz", nil, f.Owner.Access),
			400, "BAD_REQUEST", apitest.Reason("INVALID_CURSOR"))
	}
	require.GreaterOrEqual(t, paged, 12, "the page lists of the document were found")
	require.GreaterOrEqual(t, followed, 6, "lists with rows to follow")
}
