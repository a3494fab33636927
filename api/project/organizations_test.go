package project_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestOrganizationsAdminOnly(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	sys, plain := h.Register("Sys"), h.Register("Plain")
	h.MakeAdmin(sys)
	h.SetSystemRole(plain, "MEMBER")

	apitest.RequireProblem(t, h.Do("GET", "/api/v1/organizations", nil, plain.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("ADMIN_ONLY"))
	apitest.RequireProblem(t, h.Do("POST", "/api/v1/organizations", map[string]any{"name": "X", "slug": "x-plain"}, plain.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("ADMIN_ONLY"))

	slug := "acme-" + strings.ToLower(apitest.UniqueProjectKey())
	r := h.Do("POST", "/api/v1/organizations", map[string]any{"name": "Acme", "slug": slug}, sys.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	org := r.JSON(t)
	require.Equal(t, "Acme", org["name"])
	require.Equal(t, slug, org["slug"])
	require.Len(t, org, 3)

	members := h.Do("GET", "/api/v1/organizations/"+org["id"].(string)+"/members", nil, sys.Access).Array(t)
	require.Len(t, members, 1)
	require.Equal(t, "OWNER", members[0].(map[string]any)["role"], "the creator becomes OWNER")
	require.Equal(t, sys.ID.String(), members[0].(map[string]any)["user"].(map[string]any)["id"])

	apitest.RequireProblem(t, h.Do("POST", "/api/v1/organizations", map[string]any{"name": "Again", "slug": slug}, sys.Access), http.StatusConflict, "CONFLICT", apitest.Reason("DUPLICATE_SLUG"))

	list := h.Do("GET", "/api/v1/organizations", nil, sys.Access).Array(t)
	slugs := map[string]bool{}
	for _, o := range list {
		slugs[o.(map[string]any)["slug"].(string)] = true
	}
	require.True(t, slugs["default"], "the default organization exists from the first start")
	require.True(t, slugs[slug])

	for _, c := range []struct {
		body  any
		code  string
		field string
		// reason is the problem's reason; "" for none.
		reason string
	}{
		{map[string]any{"slug": "no-name"}, "BAD_REQUEST", "", "MISSING_FIELD"},
		{map[string]any{"name": "No slug"}, "BAD_REQUEST", "", "MISSING_FIELD"},
		{map[string]any{"name": " ", "slug": "blank-name"}, "VALIDATION_ERROR", "name", ""},
		{map[string]any{"name": "Upper", "slug": "Upper"}, "VALIDATION_ERROR", "slug", ""},
		{map[string]any{"name": "Space", "slug": "a b"}, "VALIDATION_ERROR", "slug", ""},
		{map[string]any{"name": "Empty", "slug": ""}, "VALIDATION_ERROR", "slug", ""},
		{map[string]any{"name": "Long", "slug": strings.Repeat("a", 101)}, "VALIDATION_ERROR", "slug", ""},
		{map[string]any{"name": "Nul\x00", "slug": "nul-name"}, "VALIDATION_ERROR", "name", "NUL_CHARACTER"},
	} {
		m := apitest.RequireProblem(t, h.Do("POST", "/api/v1/organizations", c.body, sys.Access), http.StatusBadRequest, c.code, apitest.ReasonOrNone(c.reason))
		if c.field != "" {
			require.Contains(t, m["details"], c.field)
		}
	}
	require.Equal(t, 0, h.Count("SELECT count(*) FROM organizations WHERE name IN ('No slug', 'Upper', 'Space', 'Empty', 'Long')"))
}

func TestOrganizationReadAccess(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	sys, member, outsider, other := h.Register("Sys"), h.Register("Member"), h.Register("Outsider"), h.Register("OtherSys")
	h.MakeAdmin(sys)
	h.MakeAdmin(other)
	h.SetSystemRole(member, "MEMBER")
	h.SetSystemRole(outsider, "MEMBER")
	org := apitest.PostOrganization(t, h, sys.Access)
	second := apitest.PostOrganization(t, h, sys.Access)
	apitest.PostOrgMember(t, h, sys.Access, org, member.ID, "MEMBER")

	mine := h.Do("GET", "/api/v1/organizations/mine", nil, member.Access).Array(t)
	require.Len(t, mine, 1)
	require.Equal(t, org, mine[0].(map[string]any)["id"])
	require.Empty(t, h.Do("GET", "/api/v1/organizations/mine", nil, outsider.Access).Array(t))
	require.Len(t, h.Do("GET", "/api/v1/organizations/mine", nil, sys.Access).Array(t), 2)

	for _, path := range []string{"/api/v1/organizations/" + org, "/api/v1/organizations/" + org + "/members"} {
		require.Equal(t, http.StatusOK, h.Do("GET", path, nil, member.Access).Status, path)
		require.Equal(t, http.StatusOK, h.Do("GET", path, nil, other.Access).Status, "a system ADMIN reads any organization: %s", path)
		apitest.RequireProblem(t, h.Do("GET", path, nil, outsider.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_AN_ORG_MEMBER"))
	}
	got := h.Do("GET", "/api/v1/organizations/"+org, nil, member.Access).JSON(t)
	require.Equal(t, org, got["id"])

	members := h.Do("GET", "/api/v1/organizations/"+org+"/members", nil, member.Access).Array(t)
	require.Len(t, members, 2)
	first := members[0].(map[string]any)
	require.Equal(t, "OWNER", first["role"], "owners first")
	for _, k := range []string{"id", "email", "displayName", "avatarUrl", "role", "language", "orgId", "createdAt"} {
		require.Contains(t, first["user"], k, "user is a UserResponse")
	}

	apitest.RequireProblem(t, h.Do("GET", "/api/v1/organizations/"+uuid.NewString(), nil, sys.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("ORGANIZATION_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/organizations/"+uuid.NewString()+"/members", nil, member.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("ORGANIZATION_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/organizations/not-a-uuid", nil, sys.Access), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/organizations/"+second+"/members", nil, member.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_AN_ORG_MEMBER"))
}

// orgSetup is an organization with one member of each role, plus a system ADMIN who
// created it (and so is its first OWNER).
type orgSetup struct {
	h                                 *apitest.Harness
	id                                string
	sys, owner, admin, member, nobody apitest.User
}

func newOrgSetup(t *testing.T) orgSetup {
	h := apitest.Shared(t)
	s := orgSetup{h: h, sys: h.Register("Sys"), owner: h.Register("Owner"), admin: h.Register("Admin"),
		member: h.Register("Member"), nobody: h.Register("Nobody")}
	h.MakeAdmin(s.sys)
	for _, u := range []apitest.User{s.owner, s.admin, s.member, s.nobody} {
		h.SetSystemRole(u, "MEMBER")
	}
	s.id = apitest.PostOrganization(t, h, s.sys.Access)
	apitest.PostOrgMember(t, h, s.sys.Access, s.id, s.owner.ID, "OWNER")
	apitest.PostOrgMember(t, h, s.sys.Access, s.id, s.admin.ID, "ADMIN")
	apitest.PostOrgMember(t, h, s.sys.Access, s.id, s.member.ID, "MEMBER")
	return s
}

func (s orgSetup) role(t *testing.T, u apitest.User) string {
	t.Helper()
	var role string
	n := s.h.Count("SELECT count(*) FROM organization_members WHERE org_id = $1 AND user_id = $2", s.id, u.ID)
	if n == 0 {
		return ""
	}
	for _, m := range s.h.Do("GET", "/api/v1/organizations/"+s.id+"/members", nil, s.sys.Access).Array(t) {
		mm := m.(map[string]any)
		if mm["user"].(map[string]any)["id"] == u.ID.String() {
			role = mm["role"].(string)
		}
	}
	return role
}

func TestOrganizationAddMemberRules(t *testing.T) {
	t.Parallel()
	s := newOrgSetup(t)
	h, path := s.h, "/api/v1/organizations/"+s.id+"/members"

	// Only OWNER/ADMIN (or a system ADMIN) manage members.
	apitest.RequireProblem(t, h.Do("POST", path, map[string]any{"userId": s.nobody.ID}, s.member.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("ORG_ADMIN_ONLY"))
	apitest.RequireProblem(t, h.Do("POST", path, map[string]any{"userId": s.nobody.ID}, s.nobody.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("ORG_ADMIN_ONLY"))
	// Granting OWNER needs an OWNER or a system ADMIN.
	apitest.RequireProblem(t, h.Do("POST", path, map[string]any{"userId": s.nobody.ID, "role": "OWNER"}, s.admin.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("OWNER_RULE"))
	require.Empty(t, s.role(t, s.nobody))

	for _, c := range []struct {
		body   any
		status int
		code   string
		reason string
	}{
		{map[string]any{}, 400, "BAD_REQUEST", "MISSING_FIELD"},
		{map[string]any{"userId": "x"}, 400, "BAD_REQUEST", "INVALID_UUID"},
		{map[string]any{"userId": s.nobody.ID, "role": "KING"}, 400, "BAD_REQUEST", "INVALID_ROLE"},
		{map[string]any{"userId": s.nobody.ID, "role": "owner"}, 400, "BAD_REQUEST", "INVALID_ROLE"},
		{map[string]any{"userId": uuid.New()}, 404, "NOT_FOUND", "USER_NOT_FOUND"},
		{map[string]any{"userId": s.member.ID}, 409, "CONFLICT", "ALREADY_MEMBER"},
	} {
		apitest.RequireProblem(t, h.Do("POST", path, c.body, s.admin.Access), c.status, c.code, apitest.ReasonOrNone(c.reason))
	}

	r := h.Do("POST", path, map[string]any{"userId": s.nobody.ID}, s.admin.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.Equal(t, "MEMBER", m["role"], "role defaults to MEMBER")
	require.Equal(t, s.nobody.Email, m["user"].(map[string]any)["email"])

	extra := h.Register("Extra")
	r = h.Do("POST", path, map[string]any{"userId": extra.ID, "role": "OWNER"}, s.owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "an OWNER grants OWNER: %s", r.Body)
	deleted := h.Register("Deleted")
	_, err := h.DB.Pool.Exec(t.Context(), "UPDATE users SET deleted_at = now() WHERE id = $1", deleted.ID)
	require.NoError(t, err)
	apitest.RequireProblem(t, h.Do("POST", path, map[string]any{"userId": deleted.ID}, s.sys.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("USER_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("POST", "/api/v1/organizations/"+uuid.NewString()+"/members", map[string]any{"userId": extra.ID}, s.sys.Access), http.StatusNotFound, "NOT_FOUND", apitest.Reason("ORGANIZATION_NOT_FOUND"))
}

func TestOrganizationChangeRoleRules(t *testing.T) {
	t.Parallel()
	s := newOrgSetup(t)
	h := s.h
	patch := func(actor, target apitest.User, role string) *apitest.Response {
		return h.Do("PATCH", "/api/v1/organizations/"+s.id+"/members/"+target.ID.String(), map[string]any{"role": role}, actor.Access)
	}

	apitest.RequireProblem(t, patch(s.admin, s.admin, "MEMBER"), http.StatusForbidden, "FORBIDDEN", apitest.Reason("OWN_ROLE"))
	apitest.RequireProblem(t, patch(s.owner, s.owner, "ADMIN"), http.StatusForbidden, "FORBIDDEN", apitest.Reason("OWN_ROLE"))
	apitest.RequireProblem(t, patch(s.member, s.nobody, "ADMIN"), http.StatusForbidden, "FORBIDDEN", apitest.Reason("ORG_ADMIN_ONLY"))
	apitest.RequireProblem(t, patch(s.admin, s.member, "OWNER"), http.StatusForbidden, "FORBIDDEN", apitest.Reason("OWNER_RULE"))
	apitest.RequireProblem(t, patch(s.admin, s.owner, "MEMBER"), http.StatusForbidden, "FORBIDDEN", apitest.Reason("OWNER_RULE"))
	apitest.RequireProblem(t, patch(s.owner, s.sys, "ADMIN"), http.StatusForbidden, "FORBIDDEN", apitest.Reason("OWNER_RULE"))
	apitest.RequireProblem(t, patch(s.admin, s.nobody, "ADMIN"), http.StatusNotFound, "NOT_FOUND", apitest.Reason("MEMBER_NOT_FOUND"))
	apitest.RequireProblem(t, patch(s.admin, s.member, "CHIEF"), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_ROLE"))
	apitest.RequireProblem(t, h.Do("PATCH", "/api/v1/organizations/"+s.id+"/members/"+s.member.ID.String(), map[string]any{}, s.admin.Access), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))
	require.Equal(t, []string{"OWNER", "ADMIN", "MEMBER"}, []string{s.role(t, s.owner), s.role(t, s.admin), s.role(t, s.member)}, "nothing changed")

	r := patch(s.admin, s.member, "ADMIN")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "ADMIN", r.JSON(t)["role"])
	require.Equal(t, s.member.ID.String(), r.JSON(t)["user"].(map[string]any)["id"])
	require.Equal(t, http.StatusOK, patch(s.owner, s.member, "OWNER").Status, "an OWNER grants OWNER")

	// A system ADMIN changes owners, but never the last one.
	require.Equal(t, http.StatusOK, patch(s.sys, s.member, "MEMBER").Status)
	require.Equal(t, http.StatusOK, patch(s.sys, s.owner, "ADMIN").Status)
	require.Equal(t, "OWNER", s.role(t, s.sys), "the creator is the last OWNER")
	other := h.Register("OtherSys")
	h.MakeAdmin(other)
	apitest.RequireProblem(t, patch(other, s.sys, "ADMIN"), http.StatusForbidden, "FORBIDDEN", apitest.Reason("LAST_OWNER"))
	require.Equal(t, "OWNER", s.role(t, s.sys))
}

func TestOrganizationRemoveMemberRules(t *testing.T) {
	t.Parallel()
	s := newOrgSetup(t)
	h := s.h
	remove := func(actor, target apitest.User) *apitest.Response {
		return h.Do("DELETE", "/api/v1/organizations/"+s.id+"/members/"+target.ID.String(), nil, actor.Access)
	}

	apitest.RequireProblem(t, remove(s.member, s.admin), http.StatusForbidden, "FORBIDDEN", apitest.Reason("ORG_ADMIN_ONLY"))
	apitest.RequireProblem(t, remove(s.admin, s.owner), http.StatusForbidden, "FORBIDDEN", apitest.Reason("OWNER_RULE"))
	apitest.RequireProblem(t, remove(s.owner, s.sys), http.StatusForbidden, "FORBIDDEN", apitest.Reason("OWNER_RULE"))
	apitest.RequireProblem(t, remove(s.admin, s.nobody), http.StatusNotFound, "NOT_FOUND", apitest.Reason("MEMBER_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("DELETE", "/api/v1/organizations/"+s.id+"/members/zzz", nil, s.admin.Access), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))

	r := remove(s.admin, s.member)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	require.Empty(t, s.role(t, s.member))

	require.Equal(t, http.StatusNoContent, remove(s.sys, s.owner).Status, "a system ADMIN removes an OWNER")
	apitest.RequireProblem(t, remove(s.sys, s.sys), http.StatusForbidden, "FORBIDDEN", apitest.Reason("LAST_OWNER"))
	require.Equal(t, "OWNER", s.role(t, s.sys))
	require.Equal(t, http.StatusNoContent, remove(s.admin, s.admin).Status, "an ADMIN may leave")
}

func TestSwitchOrg(t *testing.T) {
	t.Parallel()
	s := newOrgSetup(t)
	h := s.h

	r := h.Do("POST", "/api/v1/auth/switch-org/"+s.id, nil, s.member.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	body := r.JSON(t)
	require.Equal(t, "Bearer", body["tokenType"])
	require.EqualValues(t, 900, body["expiresIn"])
	token := body["accessToken"].(string)

	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return []byte(apitest.Secret), nil })
	require.NoError(t, err)
	require.Equal(t, s.id, claims["orgId"])
	require.Equal(t, "access", claims["type"])
	require.Equal(t, s.member.ID.String(), claims["sub"])

	me := h.Do("GET", "/api/v1/auth/me", nil, token)
	require.Equal(t, http.StatusOK, me.Status)
	require.Equal(t, s.id, me.JSON(t)["orgId"])

	apitest.RequireProblem(t, h.Do("POST", "/api/v1/auth/switch-org/"+s.id, nil, s.nobody.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_AN_ORG_MEMBER"))
	apitest.RequireProblem(t, h.Do("POST", "/api/v1/auth/switch-org/"+uuid.NewString(), nil, s.sys.Access), http.StatusForbidden, "FORBIDDEN", apitest.Reason("NOT_AN_ORG_MEMBER"))
	apitest.RequireProblem(t, h.Do("POST", "/api/v1/auth/switch-org/nope", nil, s.member.Access), http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	require.Equal(t, http.StatusUnauthorized, h.Do("POST", "/api/v1/auth/switch-org/"+s.id, nil, "").Status)
}
