package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/integration"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
)

// issueRefResponse is IssueRef in api/openapi/55-integrations.yaml.
type issueRefResponse struct {
	ID         uuid.UUID `json:"id"`
	Provider   string    `json:"provider"`
	RefType    string    `json:"refType"`
	ExternalID string    `json:"externalId"`
	URL        string    `json:"url"`
	Title      *string   `json:"title"`
	CreatedAt  string    `json:"createdAt"`
}

func toIssueRefResponses(rows []store.IssueRef) []issueRefResponse {
	out := make([]issueRefResponse, len(rows))
	for i, r := range rows {
		out[i] = issueRefResponse{ID: r.ID, Provider: r.Provider, RefType: r.RefType, ExternalID: r.ExternalID,
			URL: r.URL, Title: r.Title, CreatedAt: instant(r.CreatedAt)}
	}
	return out
}

// issueRefsOf loads an issue's references for the single-issue replies: one query.
func (s *Server) issueRefsOf(c *fiber.Ctx, issueID uuid.UUID) ([]issueRefResponse, error) {
	rows, err := integration.Refs(c.UserContext(), s.db.Bun, issueID)
	if err != nil {
		return nil, err
	}
	return toIssueRefResponses(rows), nil
}

func (s *Server) listIssueRefs(c *fiber.Ctx) error {
	a, ref, err := s.issueAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	rows, err := integration.IssueRefs(c.UserContext(), s.db.Bun, a.Project.ID, ref)
	if err != nil {
		return err
	}
	return c.JSON(toIssueRefResponses(rows))
}
