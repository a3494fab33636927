package api_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestPublicRoutesAreDeclared pins which /api/v1 operations answer without credentials:
// exactly those the OpenAPI document declares `security: []`. Every other one is 401
// for an anonymous caller, whatever its path parameters.
func TestPublicRoutesAreDeclared(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	doc := loadOpenAPI(t)

	var public []string
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/api/v1/") {
			continue
		}
		for method, op := range item.Operations() {
			if op.Security != nil && len(*op.Security) == 0 {
				public = append(public, method+" "+path)
				continue
			}
			concrete := fiberParam.ReplaceAllString(strings.NewReplacer("{", ":", "}", "").Replace(path), "00000000-0000-0000-0000-000000000000")
			r := h.Do(method, concrete, "{}", "")
			require.Equal(t, http.StatusUnauthorized, r.Status, "%s %s without credentials: %s", method, path, r.Body)
		}
	}
	sort.Strings(public)
	// The sign-in page's calls are among them (docs/api-conventions.md#single-sign-on).
	for _, op := range []string{"POST /api/v1/auth/register", "POST /api/v1/auth/login", "POST /api/v1/auth/refresh",
		"GET /api/v1/admin/sso/public", "POST /api/v1/auth/sso/exchange"} {
		require.Contains(t, public, op)
	}
	for _, op := range public {
		require.False(t, strings.HasPrefix(op, "GET /api/v1/admin/") && op != "GET /api/v1/admin/sso/public", "%s is public", op)
	}
}
