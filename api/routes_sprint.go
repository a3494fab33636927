package api

import (
	"github.com/gofiber/fiber/v2"
)

// sprintRoutes registers sprints, the board and the backlog under /projects/:key.
// {issueId} of the sprint issue routes is an issue key (ABC-12) or the issue's UUID.
// There is deliberately no sprint delete.
func (s *Server) sprintRoutes(r fiber.Router) {
	r.Get("/projects/:key/sprints", s.listSprints)
	r.Post("/projects/:key/sprints", s.createSprint)
	r.Patch("/projects/:key/sprints/:sprintId", s.patchSprint)
	r.Post("/projects/:key/sprints/:sprintId/start", s.startSprint)
	r.Post("/projects/:key/sprints/:sprintId/complete", s.completeSprint)
	r.Put("/projects/:key/sprints/:sprintId/issues/:issueId", s.addSprintIssue)
	r.Delete("/projects/:key/sprints/:sprintId/issues/:issueId", s.removeSprintIssue)

	r.Get("/projects/:key/board", s.getBoard)
	r.Patch("/projects/:key/board/move", s.moveOnBoard)
	r.Get("/projects/:key/backlog", s.getBacklog)
}
