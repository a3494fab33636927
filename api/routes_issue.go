package api

import "github.com/gofiber/fiber/v2"

// issueRoutes registers the issue endpoints on the authenticated /api/v1 router.
// {issueKey} is an issue key (ABC-12) or the issue's UUID on every method.
func (s *Server) issueRoutes(r fiber.Router) {
	r.Get("/projects/:key/issues", s.listIssues)
	r.Post("/projects/:key/issues", s.createIssue)
	r.Get("/projects/:key/issues/:issueKey", s.getIssue)
	r.Patch("/projects/:key/issues/:issueKey", s.patchIssue)
	r.Delete("/projects/:key/issues/:issueKey", s.deleteIssue)

	r.Get("/projects/:key/versions", s.listVersions)
	r.Post("/projects/:key/versions", s.createVersion)
	r.Put("/projects/:key/versions/:id", s.renameVersion)
	r.Delete("/projects/:key/versions/:id", s.deleteVersion)
}
