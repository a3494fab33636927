package work

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/version"
	"github.com/taskweave/taskweave/store"
)

type versionRequest struct {
	Name *string `json:"name"`
}

// parseVersion decodes {name}: required, not blank, at most 50 characters.
func parseVersion(body core.Body) (string, error) {
	var r versionRequest
	if err := body.Decode(&r); err != nil {
		return "", err
	}
	if r.Name == nil {
		return "", core.Required("name")
	}
	var f core.Fields
	issueText(&f, "name", r.Name, true, version.MaxName)
	return *r.Name, f.Err()
}

func toVersionResponse(v *store.Version) core.VersionResponse {
	return core.VersionResponse{ID: v.ID, Name: v.Name}
}

func (s *handlers) listVersions(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	vs, err := version.List(c.UserContext(), s.DB.Bun, a.Project.ID)
	if err != nil {
		return err
	}
	out := make([]core.VersionResponse, len(vs))
	for i := range vs {
		out[i] = toVersionResponse(&vs[i])
	}
	return c.JSON(out)
}

func (s *handlers) createVersion(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Member)
	if err != nil {
		return err
	}
	name, err := parseVersion(core.BodyOf(c))
	if err != nil {
		return err
	}
	v, err := version.Create(c.UserContext(), s.DB.Bun, a.Project.ID, name)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toVersionResponse(v))
}

func (s *handlers) renameVersion(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Member, "id")
	if err != nil {
		return err
	}
	name, err := parseVersion(core.BodyOf(c))
	if err != nil {
		return err
	}
	v, err := version.Rename(c.UserContext(), s.DB.Bun, a.Project.ID, id, name)
	if err != nil {
		return err
	}
	return c.JSON(toVersionResponse(v))
}

func (s *handlers) deleteVersion(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Member, "id")
	if err != nil {
		return err
	}
	if err := version.Delete(c.UserContext(), s.DB.Bun, a.Project.ID, id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
