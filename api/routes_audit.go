package api

import "github.com/gofiber/fiber/v2"

// auditRoutes registers the audit endpoints: admin ones on admin (system ADMIN) and
// the project audit on the authenticated router r.
func (s *Server) auditRoutes(r, admin fiber.Router) {}
