package api_test

import (
	"context"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
)

// loadOpenAPI parses the embedded document.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	raw, err := api.OpenAPIDocument()
	require.NoError(t, err)
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	require.NoError(t, err)
	return doc
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	require.NoError(t, doc.Validate(context.Background()))
	require.Equal(t, "3.0.3", doc.OpenAPI)
	require.Equal(t, "Taskweave API", doc.Info.Title)
	require.Contains(t, doc.Components.SecuritySchemes, "bearerAuth")
	for _, name := range []string{"AuthResponse", "UserResponse", "AdminUserResponse", "Problem", "Page",
		"PersonalAccessToken", "PersonalAccessTokenCreated", "NotificationPreferences"} {
		require.Contains(t, doc.Components.Schemas, name)
	}
}

// fiberParam matches a Fiber path parameter (":id", optional ":id?").
var fiberParam = regexp.MustCompile(`:([A-Za-z0-9_]+)\??`)

// openAPIPath turns a Fiber route path into an OpenAPI path template.
func openAPIPath(p string) string { return fiberParam.ReplaceAllString(p, "{$1}") }

// TestOpenAPIRoutesMatchDocument keeps the document and the router in step: every
// registered route is documented, and every documented operation is registered.
func TestOpenAPIRoutesMatchDocument(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	doc := loadOpenAPI(t)

	// GetRoutes(true) leaves out Use middleware, including the handlers passed to
	// Group (app.Use(s.edge) on "/", the "/api/v1" authenticate group and its
	// requireUser, the "/api/v1/admin" requireAdmin group).
	routes := h.Server.App.GetRoutes(true)
	gets := map[string]bool{}
	for _, r := range routes {
		require.NotContains(t, []string{"/", "/api/v1", "/api/v1/admin"}, r.Path,
			"a middleware entry was not filtered: %s %s", r.Method, r.Path)
		if r.Method == http.MethodGet {
			gets[r.Path] = true
		}
	}

	registered := map[string]bool{}
	for _, r := range routes {
		// Fiber adds a HEAD route for every GET; the document lists the GET.
		if r.Method == http.MethodHead && gets[r.Path] {
			continue
		}
		// Swagger UI's own assets (index page, scripts, styles) are served by the
		// embedded swgui handler under this wildcard. They are not API operations; the
		// document describes the entry points /swagger-ui.html and /swagger-ui instead,
		// and TestSwaggerUI checks that the assets are served.
		if r.Path == "/swagger-ui/*" {
			continue
		}
		// River UI's pages, assets and read API are served by riverui's own handler under
		// this wildcard: its API, not ours. The document describes the entry point
		// /admin/river/ and the mutating calls Taskweave answers itself;
		// TestRiverUIListsJobsForAdmins checks the rest is served.
		if r.Path == "/admin/river/*" && r.Method == http.MethodGet {
			continue
		}
		path := openAPIPath(r.Path)
		registered[r.Method+" "+path] = true
		item := doc.Paths.Value(path)
		require.NotNil(t, item, "route %s %s (as %s) is not in api/openapi.yaml", r.Method, r.Path, path)
		require.NotNil(t, item.GetOperation(r.Method), "route %s %s is in api/openapi.yaml without the method", r.Method, path)
	}
	require.NotEmpty(t, registered)

	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(documented)
	for _, op := range documented {
		require.True(t, registered[op], "api/openapi.yaml documents %s, which is not a registered route", op)
	}
	require.Len(t, documented, len(registered))
}

func TestSwaggerUI(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)

	r := h.Do("GET", "/openapi.yaml", nil, "")
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, mustDoc(t), r.Body)
	require.Contains(t, r.Header.Get("Content-Type"), "yaml")

	for _, p := range []string{"/swagger-ui.html", "/swagger-ui"} {
		r = h.Do("GET", p, nil, "")
		require.Equal(t, http.StatusFound, r.Status, "%s: %s", p, r.Body)
		require.Equal(t, "/swagger-ui/", r.Header.Get("Location"), p)
	}

	// The UI's assets come from the binary.
	r = h.Do("GET", "/swagger-ui/swagger-ui-bundle.js", nil, "")
	require.Equal(t, http.StatusOK, r.Status)
	require.NotEmpty(t, r.Body)
}

func TestSwaggerUIIndexPage(t *testing.T) {
	t.Parallel()
	// Routing ignores trailing slashes: /swagger-ui/ must serve the UI, not redirect to itself.
	h := apitest.Shared(t)
	r := h.Do("GET", "/swagger-ui/", nil, "")
	require.Equal(t, http.StatusOK, r.Status, "Location %q", r.Header.Get("Location"))
	require.Contains(t, r.Header.Get("Content-Type"), "text/html")
	require.Contains(t, strings.ToLower(string(r.Body)), "swagger")
}

func mustDoc(t *testing.T) []byte {
	t.Helper()
	raw, err := api.OpenAPIDocument()
	require.NoError(t, err)
	return raw
}
