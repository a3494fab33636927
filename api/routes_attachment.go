package api

import "github.com/gofiber/fiber/v2"

// attachmentRoutes registers the attachment endpoints under /projects/:key/issues/:issueKey.
func (s *Server) attachmentRoutes(r fiber.Router) {}
