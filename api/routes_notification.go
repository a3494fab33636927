package api

import "github.com/gofiber/fiber/v2"

// notificationRoutes registers the caller's own notifications under /notifications.
func (s *Server) notificationRoutes(r fiber.Router) {
	r.Get("/notifications", s.listNotifications)
	r.Get("/notifications/unread-count", s.unreadNotificationCount)
	r.Post("/notifications/read-all", s.readAllNotifications)
	r.Patch("/notifications/:id/read", s.readNotification)
}
