package api

import "github.com/gofiber/fiber/v2"

// projectRoutes registers the project endpoints on the authenticated /api/v1 router.
func (s *Server) projectRoutes(r fiber.Router) {
}
