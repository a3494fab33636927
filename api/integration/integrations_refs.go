package integration

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/integration"
	"github.com/taskweave/taskweave/domain/project"
)

func (s *handlers) listIssueRefs(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	rows, err := integration.IssueRefs(c.UserContext(), s.DB.Bun, a.Project.ID, ref)
	if err != nil {
		return err
	}
	return c.JSON(core.ToIssueRefResponses(rows))
}
