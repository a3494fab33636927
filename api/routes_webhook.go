package api

import "github.com/gofiber/fiber/v2"

// webhookRoutes registers the outgoing webhook endpoints under /projects/:key/webhooks.
func (s *Server) webhookRoutes(r fiber.Router) {
	r.Get("/projects/:key/webhooks", s.listWebhooks)
	r.Post("/projects/:key/webhooks", s.createWebhook)
	r.Put("/projects/:key/webhooks/:webhookId", s.updateWebhook)
	r.Delete("/projects/:key/webhooks/:webhookId", s.deleteWebhook)
	r.Get("/projects/:key/webhooks/:webhookId/deliveries", s.listWebhookDeliveries)
	r.Post("/projects/:key/webhooks/:webhookId/test", s.pingWebhook)
	r.Post("/projects/:key/webhooks/:webhookId/deliveries/:deliveryId/redeliver", s.redeliverWebhook)
}
