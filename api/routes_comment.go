package api

import "github.com/gofiber/fiber/v2"

// commentRoutes registers comments and the activity feed under
// /projects/:key/issues/:issueKey; {issueKey} is an issue key (ABC-12) or the issue's
// UUID, as on the issue endpoints.
func (s *Server) commentRoutes(r fiber.Router) {
	r.Get("/projects/:key/issues/:issueKey/comments", s.listComments)
	r.Post("/projects/:key/issues/:issueKey/comments", s.createComment)
	r.Put("/projects/:key/issues/:issueKey/comments/:commentId", s.editComment)
	r.Delete("/projects/:key/issues/:issueKey/comments/:commentId", s.deleteComment)
	r.Get("/projects/:key/issues/:issueKey/activity", s.listActivity)
}
