package project

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/samber/lo"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/organization"
	"github.com/taskweave/taskweave/store"
)

// organizationResponse is Organization in api/openapi/20-projects.yaml.
type organizationResponse struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Slug string `json:"slug"`
}

func toOrganizationResponse(o *store.Organization) organizationResponse {
	return organizationResponse{ID: o.ID.String(), Name: o.Name, Slug: o.Slug}
}

func toOrganizationResponses(os []store.Organization) []organizationResponse {
	return lo.Map(os, func(o store.Organization, _ int) organizationResponse { return toOrganizationResponse(&o) })
}

// orgMemberResponse is OrgMember in api/openapi/20-projects.yaml.
type orgMemberResponse struct {
	User core.UserResponse `json:"user"`
	Role string            `json:"role"`
}

func toOrgMemberResponse(m *organization.MemberView) orgMemberResponse {
	return orgMemberResponse{User: core.ToUserResponse(&m.User), Role: string(m.Role)}
}

var orgRoleNames = []string{string(organization.Owner), string(organization.Admin), string(organization.Member)}

func parseOrgRole(v string) (organization.Role, error) {
	r, ok := organization.ParseRole(v)
	if !ok {
		return organization.None, core.BadRequest("INVALID_ROLE", "field", "role", "values", strings.Join(orgRoleNames, ", "))
	}
	return r, nil
}

// maxSlug bounds an organization's slug (api/openapi/20-projects.yaml).
const maxSlug = 100

type createOrganizationRequest struct {
	Name *string `json:"name"`
	Slug *string `json:"slug"`
}

func parseCreateOrganization(body core.Body) (name, slug string, err error) {
	var r createOrganizationRequest
	if err := body.Decode(&r); err != nil {
		return "", "", err
	}
	switch {
	case r.Name == nil:
		return "", "", core.Required("name")
	case r.Slug == nil:
		return "", "", core.Required("slug")
	}
	var f core.Fields
	f.Text("name", *r.Name, true, core.MaxName)
	f.Text("slug", *r.Slug, true, maxSlug)
	if len(f) == 0 && !organization.SlugPattern.MatchString(*r.Slug) {
		f.Add("slug", "PATTERN", "field.SLUG")
	}
	return strings.TrimSpace(*r.Name), *r.Slug, f.Err()
}

// parseAddOrgMember decodes {userId, role?}; the role defaults to MEMBER.
func parseAddOrgMember(body core.Body) (uuid.UUID, organization.Role, error) {
	var r addMemberRequest
	if err := body.Decode(&r); err != nil {
		return uuid.Nil, organization.None, err
	}
	id, err := parseMemberUserID(r.UserID)
	if err != nil {
		return uuid.Nil, organization.None, err
	}
	if r.Role == nil {
		return id, organization.Member, nil
	}
	role, err := parseOrgRole(*r.Role)
	return id, role, err
}

func (s *handlers) listOrganizations(c *fiber.Ctx) error {
	os, err := organization.List(c.UserContext(), s.DB.Bun)
	if err != nil {
		return err
	}
	return c.JSON(toOrganizationResponses(os))
}

func (s *handlers) myOrganizations(c *fiber.Ctx) error {
	os, err := organization.Mine(c.UserContext(), s.DB.Bun, core.Principal(c).UserID)
	if err != nil {
		return err
	}
	return c.JSON(toOrganizationResponses(os))
}

func (s *handlers) createOrganization(c *fiber.Ctx) error {
	name, slug, err := parseCreateOrganization(core.BodyOf(c))
	if err != nil {
		return err
	}
	o, err := organization.Create(c.UserContext(), s.DB.Bun, core.Principal(c).UserID, name, slug)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toOrganizationResponse(o))
}

func (s *handlers) getOrganization(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	o, err := organization.Get(c.UserContext(), s.DB.Bun, id, core.Principal(c))
	if err != nil {
		return err
	}
	return c.JSON(toOrganizationResponse(o))
}

func (s *handlers) listOrgMembers(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	ms, err := organization.Members(c.UserContext(), s.DB.Bun, id, core.Principal(c))
	if err != nil {
		return err
	}
	out := make([]orgMemberResponse, 0, len(ms))
	for i := range ms {
		out = append(out, toOrgMemberResponse(&ms[i]))
	}
	return c.JSON(out)
}

func (s *handlers) addOrgMember(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	userID, role, err := parseAddOrgMember(core.BodyOf(c))
	if err != nil {
		return err
	}
	m, err := organization.AddMember(c.UserContext(), s.DB.Bun, id, core.Principal(c), userID, role)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toOrgMemberResponse(m))
}

func (s *handlers) changeOrgMemberRole(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	userID, err := core.PathUUID(c, "userId")
	if err != nil {
		return err
	}
	var r memberRoleRequest
	if err := core.Decode(c, &r); err != nil {
		return err
	}
	if r.Role == nil {
		return core.Required("role")
	}
	role, err := parseOrgRole(*r.Role)
	if err != nil {
		return err
	}
	m, err := organization.ChangeRole(c.UserContext(), s.DB.Bun, id, core.Principal(c), userID, role)
	if err != nil {
		return err
	}
	return c.JSON(toOrgMemberResponse(m))
}

func (s *handlers) removeOrgMember(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	userID, err := core.PathUUID(c, "userId")
	if err != nil {
		return err
	}
	if err := organization.RemoveMember(c.UserContext(), s.DB.Bun, id, core.Principal(c), userID); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// switchOrgResponse is the organization-scoped access token.
type switchOrgResponse struct {
	AccessToken string `json:"accessToken"`
	TokenType   string `json:"tokenType"`
	ExpiresIn   int64  `json:"expiresIn"`
}

func (s *handlers) switchOrg(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "orgId")
	if err != nil {
		return err
	}
	p := core.Principal(c)
	if err := organization.RequireMember(c.UserContext(), s.DB.Bun, id, p.UserID); err != nil {
		return err
	}
	token, err := s.Auth.SwitchOrg(p, id)
	if err != nil {
		return err
	}
	return c.JSON(switchOrgResponse{AccessToken: token, TokenType: "Bearer", ExpiresIn: int64(s.Auth.Tokens().AccessTTL().Seconds())})
}
