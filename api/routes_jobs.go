package api

import "github.com/gofiber/fiber/v2"

// jobRoutes registers the job operations for support staff on the admin group.
func (s *Server) jobRoutes(admin fiber.Router) {}

// opsRoutes registers the server-rendered /admin/ops/ page (outside /api/v1).
func (s *Server) opsRoutes(app *fiber.App) {}
