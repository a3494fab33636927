package project

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/samber/lo"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/project"
)

// memberResponse is `{user: UserResponse, role}` of a project member.
type memberResponse struct {
	User core.UserResponse `json:"user"`
	Role string            `json:"role"`
}

func toMemberResponse(m *project.MemberView) memberResponse {
	return memberResponse{User: core.ToUserResponse(&m.User), Role: string(m.Role)}
}

var projectRoleNames = []string{string(project.Admin), string(project.Member), string(project.Viewer)}

// parseProjectRole reads a required role member; an unknown value is BAD_REQUEST.
func parseProjectRole(v *string) (project.Role, error) {
	if v == nil {
		return project.None, core.Required("role")
	}
	r, ok := project.ParseRole(*v)
	if !ok {
		return project.None, core.BadRequest("INVALID_ROLE", "field", "role", "values", strings.Join(projectRoleNames, ", "))
	}
	return r, nil
}

// parseMemberUserID reads a required user id member; a malformed one is BAD_REQUEST.
func parseMemberUserID(v *string) (uuid.UUID, error) {
	if v == nil {
		return uuid.Nil, core.Required("userId")
	}
	return core.ParseID("userId", *v)
}

// addMemberRequest is {userId, role} of project and organization membership.
type addMemberRequest struct {
	UserID *string `json:"userId"`
	Role   *string `json:"role"`
}

func parseAddMember(body core.Body) (uuid.UUID, project.Role, error) {
	var r addMemberRequest
	if err := body.Decode(&r); err != nil {
		return uuid.Nil, project.None, err
	}
	id, err := parseMemberUserID(r.UserID)
	if err != nil {
		return uuid.Nil, project.None, err
	}
	role, err := parseProjectRole(r.Role)
	return id, role, err
}

type memberRoleRequest struct {
	Role *string `json:"role"`
}

func (s *handlers) listMembers(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	ms, err := project.Members(c.UserContext(), s.DB.Bun, &a.Project)
	if err != nil {
		return err
	}
	return c.JSON(lo.Map(ms, func(m project.MemberView, _ int) memberResponse { return toMemberResponse(&m) }))
}

func (s *handlers) addMember(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	userID, role, err := parseAddMember(core.BodyOf(c))
	if err != nil {
		return err
	}
	m, err := s.projects().AddMember(c.UserContext(), core.AuditActor(c), a, userID, role)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toMemberResponse(m))
}

func (s *handlers) changeMemberRole(c *fiber.Ctx) error {
	a, userID, err := s.ProjectItem(c, project.Admin, "userId")
	if err != nil {
		return err
	}
	var r memberRoleRequest
	if err := core.Decode(c, &r); err != nil {
		return err
	}
	role, err := parseProjectRole(r.Role)
	if err != nil {
		return err
	}
	m, err := s.projects().ChangeRole(c.UserContext(), core.AuditActor(c), a, userID, role)
	if err != nil {
		return err
	}
	return c.JSON(toMemberResponse(m))
}

func (s *handlers) removeMember(c *fiber.Ctx) error {
	a, userID, err := s.ProjectItem(c, project.Admin, "userId")
	if err != nil {
		return err
	}
	if err := s.projects().RemoveMember(c.UserContext(), core.AuditActor(c), a, userID); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
