package api

import "github.com/gofiber/fiber/v2"

// commentRoutes registers comments and the activity feed under
// /projects/:key/issues/:issueKey.
func (s *Server) commentRoutes(r fiber.Router) {}
