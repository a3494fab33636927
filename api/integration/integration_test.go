package integration_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestIntegrationCRUD(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{DB: storetest.PackageDB(t), Configure: func(s *api.Settings) {
		s.BaseURL = "https://tw.example.com/" // the trailing slash is not doubled
	}})
	f := apitest.NewProject(t, h)
	admin := h.Register("Ada")
	f.AddMember(t, admin, "ADMIN")
	base := f.Path("/integrations")

	r := h.Do("POST", base, map[string]any{"provider": "github", "repoUrl": "  https://github.com/acme/app  "}, admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	gh := r.JSON(t)
	require.Equal(t, "GITHUB", gh["provider"])
	require.Equal(t, "https://tw.example.com/api/v1/integrations/github/"+f.Key+"/webhook", gh["webhookUrl"])
	require.Equal(t, "https://github.com/acme/app", gh["repoUrl"])
	require.Regexp(t, `^[0-9a-f]{64}$`, gh["plaintextSecret"])
	require.NotEmpty(t, gh["createdAt"])
	ghID := uuid.MustParse(gh["id"].(string))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM project_integrations WHERE id = $1 AND project_id = $2 AND provider = 'GITHUB' AND webhook_secret = $3",
		ghID, f.ProjectID, gh["plaintextSecret"]), "the secret is kept in plaintext for verification")

	// One per provider, whatever the letter case; the other provider is separate.
	apitest.RequireProblem(t, h.Do("POST", base, map[string]any{"provider": "GitHub"}, f.Owner.Access), 409, "CONFLICT", apitest.Reason("INTEGRATION_EXISTS"))
	gl := igCreate(t, h, f.Owner.Access, f.Key, "GITLAB")
	require.Equal(t, "GITLAB", gl["provider"])
	require.Nil(t, gl["repoUrl"])
	require.Contains(t, gl, "repoUrl")
	require.Equal(t, "https://tw.example.com/api/v1/integrations/gitlab/"+f.Key+"/webhook", gl["webhookUrl"])
	require.NotEqual(t, gh["plaintextSecret"], gl["plaintextSecret"])

	// Bad bodies.
	m := apitest.RequireProblem(t, h.Do("POST", base, map[string]any{"provider": "bitbucket"}, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("UNKNOWN_PROVIDER"))
	require.Equal(t, "provider must be one of GITHUB, GITLAB.", m["message"])
	apitest.RequireProblem(t, h.Do("POST", base, map[string]any{"repoUrl": "x"}, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))
	apitest.RequireProblem(t, h.Do("POST", base, map[string]any{"provider": 5}, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("WRONG_TYPE"))
	apitest.RequireProblem(t, h.Do("POST", base, "{", f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("MALFORMED_JSON"))
	m = apitest.RequireProblem(t, h.Do("POST", base, map[string]any{"provider": "gitlab", "repoUrl": "https://x/" + strings.Repeat("a", 2040)}, f.Owner.Access),
		400, "VALIDATION_ERROR", apitest.NoReason)
	require.Contains(t, m["details"], "repoUrl")
	// Validation runs before the uniqueness check, so the 400 above is not a 409.
	require.Equal(t, 2, h.Count("SELECT count(*) FROM project_integrations WHERE project_id = $1", f.ProjectID))

	// Roles: members read, only project admins write.
	apitest.RequireProblem(t, h.Do("POST", base, map[string]any{"provider": "gitlab"}, f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, h.Do("GET", base, nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", base, nil, "").Status)
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/projects/NOPE9/integrations", nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))

	r = h.Do("GET", base, nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	list := r.Array(t)
	require.Len(t, list, 2)
	first := list[0].(map[string]any)
	require.Equal(t, gh["id"], first["id"], "creation order")
	require.Equal(t, "GITHUB", first["provider"])
	require.Equal(t, "https://github.com/acme/app", first["repoUrl"])
	require.Equal(t, gh["createdAt"], first["createdAt"])
	require.Equal(t, gh["webhookUrl"], first["webhookUrl"])
	require.NotContains(t, string(r.Body), gh["plaintextSecret"].(string), "the secret is never listed")
	require.NotContains(t, first, "plaintextSecret")
	require.Equal(t, "GITLAB", list[1].(map[string]any)["provider"])

	// Delete: project admins only, ids of other projects are unknown.
	other := apitest.NewProject(t, h)
	otherGH := igCreate(t, h, other.Owner.Access, other.Key, "github")
	apitest.RequireProblem(t, h.Do("DELETE", base+"/"+otherGH["id"].(string), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("INTEGRATION_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("DELETE", base+"/not-a-uuid", nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	apitest.RequireProblem(t, h.Do("DELETE", base+"/"+ghID.String(), nil, f.Member.Access), 403, "FORBIDDEN", apitest.NoReason)
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", base+"/"+ghID.String(), nil, admin.Access).Status)
	apitest.RequireProblem(t, h.Do("DELETE", base+"/"+ghID.String(), nil, admin.Access), 404, "NOT_FOUND", apitest.Reason("INTEGRATION_NOT_FOUND"))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM project_integrations WHERE id = $1", otherGH["id"]))
	require.Len(t, h.Do("GET", base, nil, f.Viewer.Access).Array(t), 1)

	// After a delete the provider can be connected again, with a new secret.
	again := igCreate(t, h, f.Owner.Access, f.Key, "github")
	require.NotEqual(t, gh["plaintextSecret"], again["plaintextSecret"])

	// German messages for the integration reasons.
	r = h.Do("POST", base, map[string]any{"provider": "github"}, f.Owner.Access, "Accept-Language", "de")
	require.Equal(t, "Das Projekt hat bereits eine Integration mit diesem Anbieter.", apitest.RequireProblem(t, r, 409, "CONFLICT", apitest.Reason("INTEGRATION_EXISTS"))["message"])
}

func TestIntegrationIssueRefsEndpoint(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	iss := f.Create(t, map[string]any{"title": "No refs yet"})
	key := iss["key"].(string)
	require.Equal(t, []any{}, iss["refs"], "create reply")

	for _, ref := range []string{key, strings.ToLower(key), iss["id"].(string)} {
		r := f.H.Do("GET", f.Path("/issues/"+ref+"/refs"), nil, f.Viewer.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, "[]", strings.TrimSpace(string(r.Body)))
	}
	require.Equal(t, []any{}, f.Get(t, key)["refs"])

	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues/"+f.Key+"-999/refs"), nil, f.Viewer.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues/"+uuid.NewString()+"/refs"), nil, f.Viewer.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues/nope/refs"), nil, f.Viewer.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_ISSUE_REF"))
	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues/"+key+"/refs"), nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))

	// An issue of another project is not found through this project.
	other := apitest.NewProject(t, f.H)
	otherIssue := other.Create(t, map[string]any{"title": "Elsewhere"})
	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues/"+otherIssue["id"].(string)+"/refs"), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
}
