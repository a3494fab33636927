package api

import "github.com/gofiber/fiber/v2"

// webhookRoutes registers the outgoing webhook endpoints under /projects/:key/webhooks.
func (s *Server) webhookRoutes(r fiber.Router) {}
