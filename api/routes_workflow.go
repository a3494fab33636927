package api

import "github.com/gofiber/fiber/v2"

// workflowRoutes registers the workflow endpoints on the authenticated /api/v1 router.
func (s *Server) workflowRoutes(r fiber.Router) {
}
