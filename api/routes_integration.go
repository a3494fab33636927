package api

import "github.com/gofiber/fiber/v2"

// incomingRoutes registers the PUBLIC incoming provider webhooks (GitHub, GitLab);
// they are checked by the request's own signature, so they come before requireUser.
func (s *Server) incomingRoutes(r fiber.Router) {}

// integrationRoutes registers /projects/:key/integrations and the issue refs.
func (s *Server) integrationRoutes(r fiber.Router) {}
