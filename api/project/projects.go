package project

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/project"
)

// projectResponse is ProjectResponse in api/openapi/20-projects.yaml; myRole is the
// caller's effective role, null when the caller has none (a system ADMIN acting on a
// foreign project).
type projectResponse struct {
	ID          string  `json:"id"`
	Key         string  `json:"key"`
	Name        string  `json:"name"`
	Description *string `json:"description"`
	OwnerID     string  `json:"ownerId"`
	Archived    bool    `json:"archived"`
	OrgID       *string `json:"orgId"`
	MyRole      *string `json:"myRole"`
}

func toProjectResponse(a *project.Access) projectResponse {
	p := &a.Project
	r := projectResponse{ID: p.ID.String(), Key: p.Key, Name: p.Name, Description: p.Description,
		OwnerID: p.OwnerID.String(), Archived: p.Archived, OrgID: projectUUIDString(p.OrgID)}
	if a.Role != project.None {
		role := string(a.Role)
		r.MyRole = &role
	}
	return r
}

// projectUUIDString renders a nullable id.
func projectUUIDString(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

// projects is the project service over the server's database and audit recorder.
func (s *handlers) projects() *project.Service { return project.NewService(s.DB.Bun, s.Audit) }

// projectHasNoUpdate answers 404 to PUT, PATCH and DELETE /projects/{key}: there is no
// project update or archive endpoint (docs/api-conventions.md#deliberate-choices), and
// Fiber would otherwise say 405 because GET exists on the path.
func projectHasNoUpdate(c *fiber.Ctx) error {
	switch c.Method() {
	case http.MethodPut, http.MethodPatch, http.MethodDelete:
		if strings.EqualFold(strings.TrimSuffix(c.Path(), "/"), "/api/v1/projects/"+c.Params("key")) {
			return core.NotFound("ROUTE_NOT_FOUND")
		}
	}
	return c.Next()
}

type createProjectRequest struct {
	Key         *string `json:"key"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// parseCreateProject decodes POST /projects: key and name are required; a lower-case
// or otherwise malformed key is a VALIDATION_ERROR, not silently upper-cased.
func parseCreateProject(body core.Body) (project.NewProject, error) {
	var r createProjectRequest
	if err := body.Decode(&r); err != nil {
		return project.NewProject{}, err
	}
	switch {
	case r.Key == nil:
		return project.NewProject{}, core.Required("key")
	case r.Name == nil:
		return project.NewProject{}, core.Required("name")
	}
	var f core.Fields
	if !project.KeyPattern.MatchString(*r.Key) {
		f.Add("key", "PATTERN", "field.PROJECT_KEY")
	}
	f.Text("name", *r.Name, true, core.MaxName)
	if r.Description != nil {
		f.Text("description", *r.Description, false, 0)
	}
	return project.NewProject{Key: *r.Key, Name: strings.TrimSpace(*r.Name), Description: r.Description}, f.Err()
}

func (s *handlers) createProject(c *fiber.Ctx) error {
	in, err := parseCreateProject(core.BodyOf(c))
	if err != nil {
		return err
	}
	a, err := s.projects().Create(c.UserContext(), core.AuditActor(c), in)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toProjectResponse(a))
}

func (s *handlers) listProjects(c *fiber.Ctx) error {
	as, err := project.ListFor(c.UserContext(), s.DB.Bun, core.Principal(c).UserID)
	if err != nil {
		return err
	}
	out := make([]projectResponse, 0, len(as))
	for i := range as {
		out = append(out, toProjectResponse(&as[i]))
	}
	return c.JSON(out)
}

func (s *handlers) getProject(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	return c.JSON(toProjectResponse(a))
}

// parseProjectOrganization decodes {orgId: uuid|null}; the member is required, null
// removes the organization.
func parseProjectOrganization(body core.Body) (*uuid.UUID, error) {
	var r struct {
		OrgID json.RawMessage `json:"orgId"`
	}
	if err := body.Decode(&r); err != nil {
		return nil, err
	}
	if len(r.OrgID) == 0 {
		return nil, core.Required("orgId")
	}
	if string(r.OrgID) == "null" {
		return nil, nil
	}
	var raw string
	if err := json.Unmarshal(r.OrgID, &raw); err != nil {
		return nil, core.BadRequest("WRONG_TYPE", "field", "orgId")
	}
	return core.OptionalID("orgId", &raw)
}

func (s *handlers) setProjectOrganization(c *fiber.Ctx) error {
	a, err := s.ProjectAccessOrAdmin(c, project.Admin)
	if err != nil {
		return err
	}
	orgID, err := parseProjectOrganization(core.BodyOf(c))
	if err != nil {
		return err
	}
	a, err = s.projects().SetOrganization(c.UserContext(), core.AuditActor(c), core.Principal(c), a, orgID)
	if err != nil {
		return err
	}
	return c.JSON(toProjectResponse(a))
}
