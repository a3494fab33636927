package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/taskweave/taskweave/api/core"

	"github.com/taskweave/taskweave/domain/integration"
	"github.com/taskweave/taskweave/domain/project"
)

// issueRefsOf loads an issue's references for the single-issue replies: one query.
func (s *Server) issueRefsOf(c *fiber.Ctx, issueID uuid.UUID) ([]core.IssueRefResponse, error) {
	rows, err := integration.Refs(c.UserContext(), s.db.Bun, issueID)
	if err != nil {
		return nil, err
	}
	return core.ToIssueRefResponses(rows), nil
}

func (s *Server) listIssueRefs(c *fiber.Ctx) error {
	a, ref, err := s.env.IssueAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	rows, err := integration.IssueRefs(c.UserContext(), s.db.Bun, a.Project.ID, ref)
	if err != nil {
		return err
	}
	return c.JSON(core.ToIssueRefResponses(rows))
}
