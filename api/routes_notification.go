package api

import "github.com/gofiber/fiber/v2"

// notificationRoutes registers the caller's own notifications under /notifications.
func (s *Server) notificationRoutes(r fiber.Router) {}
