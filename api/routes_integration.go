package api

import "github.com/gofiber/fiber/v2"

// incomingRoutes registers the PUBLIC incoming provider webhooks (GitHub, GitLab);
// they are checked by the request's own signature, so they come before requireUser.
func (s *Server) incomingRoutes(r fiber.Router) {
	r.Post("/integrations/github/:projectKey/webhook", s.incomingGitHub)
	r.Post("/integrations/gitlab/:projectKey/webhook", s.incomingGitLab)
}

// integrationRoutes registers /projects/:key/integrations and the issue refs.
func (s *Server) integrationRoutes(r fiber.Router) {
	r.Get("/projects/:key/integrations", s.listIntegrations)
	r.Post("/projects/:key/integrations", s.createIntegration)
	r.Delete("/projects/:key/integrations/:integrationId", s.deleteIntegration)
	r.Get("/projects/:key/issues/:issueKey/refs", s.listIssueRefs)
}
