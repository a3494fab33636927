package api

import "github.com/gofiber/fiber/v2"

// reportRoutes registers the reports and the dashboard under /projects/:key.
func (s *Server) reportRoutes(r fiber.Router) {}
