package integration

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
)

// handlers are the outgoing webhook, integration and incoming provider webhook endpoints.
type handlers struct{ *core.Env }

// PublicRoutes registers the PUBLIC incoming provider webhooks (GitHub, GitLab);
// they are checked by the request's own signature, so they come before requireUser.
func PublicRoutes(r fiber.Router, env *core.Env) {
	s := &handlers{env}
	r.Post("/integrations/github/:projectKey/webhook", s.incomingGitHub)
	r.Post("/integrations/gitlab/:projectKey/webhook", s.incomingGitLab)
}

// Routes registers the outgoing webhook endpoints under /projects/:key/webhooks, then
// /projects/:key/integrations and the issue refs.
func Routes(r fiber.Router, env *core.Env) {
	s := &handlers{env}
	r.Get("/projects/:key/webhooks", s.listWebhooks)
	r.Post("/projects/:key/webhooks", s.createWebhook)
	r.Put("/projects/:key/webhooks/:webhookId", s.updateWebhook)
	r.Delete("/projects/:key/webhooks/:webhookId", s.deleteWebhook)
	r.Get("/projects/:key/webhooks/:webhookId/deliveries", s.listWebhookDeliveries)
	r.Post("/projects/:key/webhooks/:webhookId/test", s.pingWebhook)
	r.Post("/projects/:key/webhooks/:webhookId/deliveries/:deliveryId/redeliver", s.redeliverWebhook)

	r.Get("/projects/:key/integrations", s.listIntegrations)
	r.Post("/projects/:key/integrations", s.createIntegration)
	r.Delete("/projects/:key/integrations/:integrationId", s.deleteIntegration)
	r.Get("/projects/:key/issues/:issueKey/refs", s.listIssueRefs)
}
