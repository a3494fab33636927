package project_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestCreateProject(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("Creator")
	key := apitest.UniqueProjectKey()

	r := h.Do("POST", "/api/v1/projects", map[string]any{"key": key, "name": "  Apollo  ", "description": "Moon"}, u.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	p := r.JSON(t)
	require.Equal(t, key, p["key"])
	require.Equal(t, "Apollo", p["name"], "name is trimmed")
	require.Equal(t, "Moon", p["description"])
	require.Equal(t, u.ID.String(), p["ownerId"])
	require.Equal(t, false, p["archived"])
	require.Nil(t, p["orgId"])
	require.Contains(t, p, "orgId")
	require.Equal(t, "ADMIN", p["myRole"])
	require.NotEmpty(t, uuid.MustParse(p["id"].(string)))

	require.Equal(t, 1, h.Count("SELECT count(*) FROM project_members WHERE project_id = $1 AND user_id = $2 AND role = 'ADMIN'", p["id"], u.ID))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM projects p JOIN workflows w ON w.id = p.workflow_id
		WHERE p.id = $1 AND w.project_id = p.id AND w.name = 'Default Workflow' AND w.is_default`, p["id"]), "default workflow assigned")
	require.Equal(t, 3, h.Count("SELECT count(*) FROM workflow_statuses s JOIN workflows w ON w.id = s.workflow_id WHERE w.project_id = $1", p["id"]))

	got := h.Do("GET", "/api/v1/projects/"+key, nil, u.Access)
	require.Equal(t, http.StatusOK, got.Status)
	require.Equal(t, p, got.JSON(t))

	// Without a description it is null, never left out.
	r = h.Do("POST", "/api/v1/projects", map[string]any{"key": apitest.UniqueProjectKey(), "name": "Bare"}, u.Access)
	require.Equal(t, http.StatusCreated, r.Status)
	bare := r.JSON(t)
	require.Contains(t, bare, "description")
	require.Nil(t, bare["description"])
}

func TestCreateProjectRejectsBadInput(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("BadInput")
	long := strings.Repeat("n", 256)
	for _, c := range []struct {
		name   string
		body   any
		code   string
		field  string
		reason string
	}{
		{"no key", map[string]any{"name": "x"}, "BAD_REQUEST", "", "MISSING_FIELD"},
		{"null key", map[string]any{"key": nil, "name": "x"}, "BAD_REQUEST", "", "MISSING_FIELD"},
		{"no name", map[string]any{"key": "OKAY"}, "BAD_REQUEST", "", "MISSING_FIELD"},
		{"key of wrong type", map[string]any{"key": 12, "name": "x"}, "BAD_REQUEST", "", "WRONG_TYPE"},
		{"malformed JSON", `{"key": "AB"`, "BAD_REQUEST", "", "MALFORMED_JSON"},
		{"not an object", `["AB"]`, "BAD_REQUEST", "", "MALFORMED_JSON"},
		{"lower-case key", map[string]any{"key": "abc", "name": "x"}, "VALIDATION_ERROR", "key", ""},
		{"one character", map[string]any{"key": "A", "name": "x"}, "VALIDATION_ERROR", "key", ""},
		{"eleven characters", map[string]any{"key": "ABCDEFGHIJK", "name": "x"}, "VALIDATION_ERROR", "key", ""},
		{"hyphen", map[string]any{"key": "AB-1", "name": "x"}, "VALIDATION_ERROR", "key", ""},
		{"empty key", map[string]any{"key": "", "name": "x"}, "VALIDATION_ERROR", "key", ""},
		{"blank name", map[string]any{"key": apitest.UniqueProjectKey(), "name": "   "}, "VALIDATION_ERROR", "name", ""},
		{"long name", map[string]any{"key": apitest.UniqueProjectKey(), "name": long}, "VALIDATION_ERROR", "name", ""},
		{"NUL in name", map[string]any{"key": apitest.UniqueProjectKey(), "name": "a\x00b"}, "VALIDATION_ERROR", "name", "NUL_CHARACTER"},
		{"NUL in description", map[string]any{"key": apitest.UniqueProjectKey(), "name": "x", "description": "\x00"}, "VALIDATION_ERROR", "description", "NUL_CHARACTER"},
		{"description of wrong type", map[string]any{"key": apitest.UniqueProjectKey(), "name": "x", "description": 5}, "BAD_REQUEST", "", "WRONG_TYPE"},
	} {
		r := h.Do("POST", "/api/v1/projects", c.body, u.Access)
		m := apitest.RequireProblem(t, r, http.StatusBadRequest, c.code, apitest.ReasonOrNone(c.reason))
		if c.field != "" {
			require.Contains(t, m["details"], c.field, c.name)
			errs := m["errors"].([]any)
			require.Equal(t, c.field, errs[0].(map[string]any)["field"], c.name)
		}
	}
	require.Equal(t, 0, h.Count("SELECT count(*) FROM projects WHERE owner_id = $1", u.ID), "nothing was created")
	require.Empty(t, h.Do("GET", "/api/v1/projects", nil, u.Access).Array(t))
}

func TestCreateProjectDuplicateKey(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	a, b := h.Register("First"), h.Register("Second")
	key := apitest.PostProject(t, h, a.Access)

	r := h.Do("POST", "/api/v1/projects", map[string]any{"key": key, "name": "Again"}, b.Access)
	apitest.RequireProblem(t, r, http.StatusConflict, "CONFLICT", apitest.Reason("DUPLICATE_KEY"))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM projects WHERE key = $1", key))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM projects WHERE owner_id = $1", b.ID))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM project_members WHERE user_id = $1", b.ID), "the rolled-back create left no member row")
}

// TestProjectHasNoUpdateEndpoints: there is no update or archive endpoint; the methods
// answer 404 (not 405) and change nothing.
func TestProjectHasNoUpdateEndpoints(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u := h.Register("NoUpdate")
	key := apitest.PostProject(t, h, u.Access)
	for _, method := range []string{"PUT", "PATCH", "DELETE"} {
		for _, path := range []string{"/api/v1/projects/" + key, "/api/v1/projects/" + key + "/"} {
			r := h.Do(method, path, map[string]any{"name": "Renamed", "archived": true}, u.Access)
			apitest.RequireProblem(t, r, http.StatusNotFound, "NOT_FOUND", apitest.Reason("ROUTE_NOT_FOUND"))
		}
	}
	p := h.Do("GET", "/api/v1/projects/"+key, nil, u.Access).JSON(t)
	require.Equal(t, "Project "+key, p["name"])
	require.Equal(t, false, p["archived"])
	// Sub-resources are unaffected by the guard.
	require.Equal(t, http.StatusOK, h.Do("GET", "/api/v1/projects/"+key+"/members", nil, u.Access).Status)
}

func TestListProjects(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	admin := h.Register("OrgAdmin")
	h.MakeAdmin(admin)
	owner, other, me := h.Register("Owner"), h.Register("Other"), h.Register("Me")

	owned := apitest.PostProject(t, h, me.Access)
	member := apitest.PostProject(t, h, owner.Access)
	apitest.PostMember(t, h, owner.Access, member, me.ID, "VIEWER")
	viaOrg := apitest.PostProject(t, h, owner.Access)
	both := apitest.PostProject(t, h, owner.Access)
	apitest.PostMember(t, h, owner.Access, both, me.ID, "ADMIN")
	hidden := apitest.PostProject(t, h, other.Access)

	org := apitest.PostOrganization(t, h, admin.Access)
	apitest.PostOrgMember(t, h, admin.Access, org, me.ID, "MEMBER")
	apitest.PostOrgMember(t, h, admin.Access, org, owner.ID, "ADMIN")
	for _, k := range []string{viaOrg, both} {
		r := h.Do("PATCH", "/api/v1/projects/"+k+"/organization", map[string]any{"orgId": org}, owner.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	}
	// me also owns a project in the organization: still listed once, as ADMIN.
	require.Equal(t, http.StatusOK, h.Do("PATCH", "/api/v1/projects/"+owned+"/organization", map[string]any{"orgId": org}, admin.Access).Status)

	list := h.Do("GET", "/api/v1/projects", nil, me.Access).Array(t)
	roles := map[string]any{}
	for _, item := range list {
		p := item.(map[string]any)
		_, dup := roles[p["key"].(string)]
		require.False(t, dup, "listed twice: %s", p["key"])
		roles[p["key"].(string)] = p["myRole"]
		for _, k := range []string{"id", "key", "name", "description", "ownerId", "archived", "orgId", "myRole"} {
			require.Contains(t, p, k)
		}
	}
	require.Equal(t, map[string]any{owned: "ADMIN", member: "VIEWER", viaOrg: "VIEWER", both: "ADMIN"}, roles)
	require.NotContains(t, roles, hidden)
}

func TestSetProjectOrganization(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	sys := h.Register("Sys")
	h.MakeAdmin(sys)
	owner, orgAdmin, writer := h.Register("Owner"), h.Register("OrgAdmin"), h.Register("Writer")
	key := apitest.PostProject(t, h, owner.Access)
	apitest.PostMember(t, h, owner.Access, key, orgAdmin.ID, "ADMIN")
	apitest.PostMember(t, h, owner.Access, key, writer.ID, "MEMBER")
	org := apitest.PostOrganization(t, h, sys.Access)
	apitest.PostOrgMember(t, h, sys.Access, org, orgAdmin.ID, "ADMIN")
	apitest.PostOrgMember(t, h, sys.Access, org, writer.ID, "OWNER")
	path := "/api/v1/projects/" + key + "/organization"

	// A project ADMIN who is not OWNER/ADMIN of the target organization.
	apitest.RequireProblem(t, h.Do("PATCH", path, map[string]any{"orgId": org}, owner.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("ORG_ADMIN_ONLY"))
	// An org OWNER who is only a project MEMBER.
	apitest.RequireProblem(t, h.Do("PATCH", path, map[string]any{"orgId": org}, writer.Access), http.StatusForbidden, "FORBIDDEN", apitest.NoReason)
	require.Equal(t, 0, h.Count("SELECT count(*) FROM projects WHERE key = $1 AND org_id IS NOT NULL", key))

	for _, c := range []struct {
		body   any
		reason string
	}{
		{map[string]any{}, "MISSING_FIELD"},
		{map[string]any{"orgId": "nope"}, "INVALID_UUID"},
		{map[string]any{"orgId": 7}, "WRONG_TYPE"},
		{"", "MALFORMED_JSON"},
	} {
		apitest.RequireProblem(t, h.Do("PATCH", path, c.body, orgAdmin.Access), http.StatusBadRequest, "BAD_REQUEST", apitest.ReasonOrNone(c.reason))
	}
	apitest.RequireProblem(t, h.Do("PATCH", path, map[string]any{"orgId": uuid.New()}, orgAdmin.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("ORGANIZATION_NOT_FOUND"))

	r := h.Do("PATCH", path, map[string]any{"orgId": org}, orgAdmin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	p := r.JSON(t)
	require.Equal(t, org, p["orgId"])
	require.Equal(t, "ADMIN", p["myRole"])
	// The org OWNER now inherits ADMIN, raising their explicit MEMBER.
	require.Equal(t, "ADMIN", h.Do("GET", "/api/v1/projects/"+key, nil, writer.Access).JSON(t)["myRole"])

	// A system ADMIN without any project role may assign or remove it.
	r = h.Do("PATCH", path, map[string]any{"orgId": nil}, sys.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	p = r.JSON(t)
	require.Nil(t, p["orgId"])
	require.Contains(t, p, "myRole")
	require.Nil(t, p["myRole"], "the system ADMIN has no project role")
	require.Equal(t, "MEMBER", h.Do("GET", "/api/v1/projects/"+key, nil, writer.Access).JSON(t)["myRole"], "inheritance gone with the organization")

	apitest.RequireProblem(t, h.Do("PATCH", "/api/v1/projects/NOSUCH1/organization", map[string]any{"orgId": nil}, sys.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
}

// pjQueryCounter counts the statements bun sends.
type pjQueryCounter struct{ n atomic.Int64 }

func (q *pjQueryCounter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	q.n.Add(1)
	return ctx
}

func (q *pjQueryCounter) AfterQuery(context.Context, *bun.QueryEvent) {}

// TestProjectListsMakeConstantQueries: GET /projects and GET …/members cost the same
// number of statements for 1 row as for 20 (no N+1).
func TestProjectListsMakeConstantQueries(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	counter := &pjQueryCounter{}
	h.DB.Bun.AddQueryHook(counter)
	u := h.Register("Counter")
	key := apitest.PostProject(t, h, u.Access)

	count := func(path string) int64 {
		before := counter.n.Load()
		r := h.Do("GET", path, nil, u.Access)
		require.Equal(t, http.StatusOK, r.Status)
		return counter.n.Load() - before
	}
	projectsFew, membersFew := count("/api/v1/projects"), count("/api/v1/projects/"+key+"/members")

	for range 19 {
		apitest.PostProject(t, h, u.Access)
		apitest.PostMember(t, h, u.Access, key, h.Register("M").ID, "MEMBER")
	}
	require.Len(t, h.Do("GET", "/api/v1/projects", nil, u.Access).Array(t), 20)
	require.Len(t, h.Do("GET", "/api/v1/projects/"+key+"/members", nil, u.Access).Array(t), 20)
	require.Equal(t, projectsFew, count("/api/v1/projects"))
	require.Equal(t, membersFew, count("/api/v1/projects/"+key+"/members"))
	require.Positive(t, projectsFew, "the hook sees the queries")
	require.LessOrEqual(t, projectsFew, int64(2), "authentication and one list query")
	require.LessOrEqual(t, membersFew, int64(3), "authentication, project access and one list query")
}

// TestProjectRoleMatrix: VIEWER reads, MEMBER also writes, ADMIN administers; the owner
// is an implicit ADMIN; a non-member gets 403 and an unknown key 404 everywhere.
func TestProjectRoleMatrix(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	owner := h.Register("Owner")
	key := apitest.PostProject(t, h, owner.Access)
	target := h.Register("Target")
	apitest.PostMember(t, h, owner.Access, key, target.ID, "VIEWER")
	users := map[string]apitest.User{"OWNER": owner, "NONE": h.Register("Outsider")}
	for _, role := range []string{"ADMIN", "MEMBER", "VIEWER"} {
		users[role] = h.Register(role)
		apitest.PostMember(t, h, owner.Access, key, users[role].ID, role)
	}
	rank := map[string]int{"NONE": 0, "VIEWER": 1, "MEMBER": 2, "ADMIN": 3, "OWNER": 3}

	type call struct {
		method, path string
		body         func() any
		min          string
		okStatus     int
	}
	base := "/api/v1/projects/" + key
	calls := []call{
		{"GET", base, nil, "VIEWER", 200},
		{"GET", base + "/members", nil, "VIEWER", 200},
		{"GET", base + "/api-keys", nil, "VIEWER", 200},
		{"GET", base + "/labels", nil, "VIEWER", 200},
		{"POST", base + "/labels", func() any { return map[string]any{"name": apitest.UniqueProjectKey(), "color": "#112233"} }, "MEMBER", 201},
		{"DELETE", base + "/labels/" + uuid.NewString(), nil, "MEMBER", 404},
		{"POST", base + "/api-keys", func() any { return map[string]any{"name": "k"} }, "MEMBER", 201},
		{"DELETE", base + "/api-keys/" + uuid.NewString(), nil, "ADMIN", 404},
		{"POST", base + "/members", func() any { return map[string]any{"userId": h.Register("New").ID, "role": "VIEWER"} }, "ADMIN", 201},
		{"PATCH", base + "/members/" + target.ID.String(), func() any { return map[string]any{"role": "VIEWER"} }, "ADMIN", 200},
		{"PATCH", base + "/organization", func() any { return map[string]any{"orgId": nil} }, "ADMIN", 200},
	}
	for _, c := range calls {
		for role, u := range users {
			var body any
			if c.body != nil {
				body = c.body()
			}
			r := h.Do(c.method, c.path, body, u.Access)
			switch {
			case rank[role] >= rank[c.min]:
				require.Equal(t, c.okStatus, r.Status, "%s %s as %s: %s", c.method, c.path, role, r.Body)
			case role == "NONE":
				apitest.RequireProblem(t, r, http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
			default:
				apitest.RequireProblem(t, r, http.StatusForbidden, "FORBIDDEN", apitest.NoReason)
			}
		}
		unknown := strings.Replace(c.path, key, "NOSUCHKEY", 1)
		var body any
		if c.body != nil {
			body = c.body()
		}
		apitest.RequireProblem(t, h.Do(c.method, unknown, body, owner.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
	}
}

// TestOrganizationRoleInheritance: organization OWNER/ADMIN inherit ADMIN and MEMBER
// inherits VIEWER on the organization's projects; inheritance only raises.
func TestOrganizationRoleInheritance(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	sys, owner := h.Register("Sys"), h.Register("Owner")
	h.MakeAdmin(sys)
	key := apitest.PostProject(t, h, owner.Access)
	outside := apitest.PostProject(t, h, owner.Access)
	org := apitest.PostOrganization(t, h, sys.Access)
	require.Equal(t, http.StatusOK, h.Do("PATCH", "/api/v1/projects/"+key+"/organization", map[string]any{"orgId": org}, sys.Access).Status)

	for _, c := range []struct {
		name, explicit, org, want string
	}{
		{"org member", "", "MEMBER", "VIEWER"},
		{"org admin", "", "ADMIN", "ADMIN"},
		{"org owner", "", "OWNER", "ADMIN"},
		{"explicit admin, org member", "ADMIN", "MEMBER", "ADMIN"},
		{"explicit member, org member", "MEMBER", "MEMBER", "MEMBER"},
		{"explicit viewer, org admin", "VIEWER", "ADMIN", "ADMIN"},
		{"explicit member, org owner", "MEMBER", "OWNER", "ADMIN"},
	} {
		u := h.Register("U")
		if c.explicit != "" {
			apitest.PostMember(t, h, owner.Access, key, u.ID, c.explicit)
		}
		apitest.PostOrgMember(t, h, sys.Access, org, u.ID, c.org)

		r := h.Do("GET", "/api/v1/projects/"+key, nil, u.Access)
		require.Equal(t, http.StatusOK, r.Status, c.name)
		require.Equal(t, c.want, r.JSON(t)["myRole"], c.name)
		listed := map[string]any{}
		for _, p := range h.Do("GET", "/api/v1/projects", nil, u.Access).Array(t) {
			listed[p.(map[string]any)["key"].(string)] = p.(map[string]any)["myRole"]
		}
		require.Equal(t, map[string]any{key: c.want}, listed, c.name)

		write := h.Do("POST", "/api/v1/projects/"+key+"/labels", map[string]any{"name": apitest.UniqueProjectKey(), "color": "#010203"}, u.Access)
		createKey := h.Do("POST", "/api/v1/projects/"+key+"/api-keys", map[string]any{"name": "k"}, u.Access)
		del := h.Do("DELETE", "/api/v1/projects/"+key+"/api-keys/"+uuid.NewString(), nil, u.Access)
		switch c.want {
		case "VIEWER":
			require.Equal(t, []int{403, 403, 403}, []int{write.Status, createKey.Status, del.Status}, c.name)
		case "MEMBER":
			require.Equal(t, []int{201, 201, 403}, []int{write.Status, createKey.Status, del.Status}, c.name)
		case "ADMIN":
			require.Equal(t, []int{201, 201, 404}, []int{write.Status, createKey.Status, del.Status}, c.name)
		}
		// A project outside the organization is unaffected.
		apitest.RequireProblem(t, h.Do("GET", "/api/v1/projects/"+outside, nil, u.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	}
}
