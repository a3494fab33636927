package work

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/board"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
)

// backlogResponse is BacklogResponse in api/openapi/70-sprints.yaml.
type backlogResponse struct {
	Sprints       []backlogSprintResponse `json:"sprints"`
	BacklogIssues []core.IssueResponse    `json:"backlogIssues"`
}

// backlogSprintResponse is one PLANNED sprint with its issues and their points.
type backlogSprintResponse struct {
	Sprint      sprintResponse       `json:"sprint"`
	Issues      []core.IssueResponse `json:"issues"`
	TotalPoints int                  `json:"totalPoints"`
}

func backlogIssues(views []*issue.View) []core.IssueResponse {
	out := make([]core.IssueResponse, len(views))
	for i, v := range views {
		out[i] = core.ToIssueResponse(v)
	}
	return out
}

func (s *handlers) getBacklog(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	b, err := board.LoadBacklog(c.UserContext(), s.DB.Pool, issueProject(a))
	if err != nil {
		return err
	}
	out := backlogResponse{Sprints: make([]backlogSprintResponse, len(b.Sprints)), BacklogIssues: backlogIssues(b.Issues)}
	for i, sp := range b.Sprints {
		out.Sprints[i] = backlogSprintResponse{Sprint: toSprintResponse(&sp.Sprint), Issues: backlogIssues(sp.Issues),
			TotalPoints: sp.TotalPoints}
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return json.NewEncoder(c.Response().BodyWriter()).Encode(out)
}
