package api

import "github.com/gofiber/fiber/v2"

// issueRoutes registers the issue endpoints on the authenticated /api/v1 router.
func (s *Server) issueRoutes(r fiber.Router) {
}
