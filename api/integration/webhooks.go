package integration

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/store"
)

// webhookResponse is Webhook in api/openapi/50-webhooks.yaml (+ projectId, updatedAt).
// The secret is never part of it.
type webhookResponse struct {
	ID        string   `json:"id"`
	ProjectID string   `json:"projectId"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Enabled   bool     `json:"enabled"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
}

// webhookCreatedResponse is the create reply, the only one carrying the secret.
type webhookCreatedResponse struct {
	Webhook         webhookResponse `json:"webhook"`
	PlaintextSecret string          `json:"plaintextSecret"`
}

func toWebhookResponse(w *store.Webhook) webhookResponse {
	events := w.Events
	if events == nil {
		events = []string{}
	}
	return webhookResponse{ID: w.ID.String(), ProjectID: w.ProjectID.String(), URL: w.URL, Events: events,
		Enabled: w.Enabled, CreatedAt: core.Instant(w.CreatedAt), UpdatedAt: core.Instant(w.UpdatedAt)}
}

// webhookRequest is the create and update body; on update every member is optional.
type webhookRequest struct {
	URL     *string  `json:"url"`
	Events  []string `json:"events"`
	Secret  *string  `json:"secret"`
	Enabled *bool    `json:"enabled"`
}

// parseWebhook decodes a create (create = true) or update body. Missing url or events
// on create and an unknown event type are BAD_REQUEST; a blank or too long url, an
// empty events list and a too long secret are VALIDATION_ERRORs. The URL's scheme and
// address are the domain's check (WEBHOOK_URL_REJECTED). Repeated events count once.
func parseWebhook(body core.Body, create bool) (webhookRequest, error) {
	var r webhookRequest
	if err := body.Decode(&r); err != nil {
		return r, err
	}
	if create {
		switch {
		case r.URL == nil:
			return r, core.Required("url")
		case r.Events == nil:
			return r, core.Required("events")
		}
	}
	for _, e := range r.Events {
		if !webhook.ValidEvent(e) {
			return r, core.BadRequest("UNKNOWN_EVENT", "event", e, "values", strings.Join(webhook.EventTypes, ", "))
		}
	}
	var f core.Fields
	if r.URL != nil {
		u := strings.TrimSpace(*r.URL)
		f.Text("url", u, true, webhook.MaxURLLength)
		r.URL = &u
	}
	if r.Events != nil {
		if len(r.Events) == 0 {
			f.Add("events", "SIZE", "field.WEBHOOK_EVENTS")
		}
		r.Events = uniqueStrings(r.Events)
	}
	if r.Secret != nil {
		f.Text("secret", *r.Secret, false, webhook.MaxSecretLength)
	}
	return r, f.Err()
}

// uniqueStrings keeps the first occurrence of each value, in order.
func uniqueStrings(in []string) []string {
	out := make([]string, 0, len(in))
	seen := make(map[string]bool, len(in))
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// webhooks is the webhook service over the server's database, bus and audit log.
func (s *handlers) webhooks() *webhook.Service {
	return webhook.NewService(s.DB.Bun, s.Bus, s.Audit, s.Webhook)
}

func webhookProject(a *project.Access) webhook.Project {
	return webhook.Project{ID: a.Project.ID, Key: a.Project.Key}
}

func (s *handlers) listWebhooks(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	ws, err := s.webhooks().List(c.UserContext(), a.Project.ID)
	if err != nil {
		return err
	}
	out := make([]webhookResponse, 0, len(ws))
	for i := range ws {
		out = append(out, toWebhookResponse(&ws[i]))
	}
	return c.JSON(out)
}

func (s *handlers) createWebhook(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	r, err := parseWebhook(core.BodyOf(c), true)
	if err != nil {
		return err
	}
	in := webhook.NewWebhook{URL: *r.URL, Events: r.Events, Enabled: true}
	if r.Secret != nil && strings.TrimSpace(*r.Secret) != "" {
		in.Secret = *r.Secret
	}
	if r.Enabled != nil {
		in.Enabled = *r.Enabled
	}
	w, err := s.webhooks().Create(c.UserContext(), core.AuditActor(c), webhookProject(a), in)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(webhookCreatedResponse{Webhook: toWebhookResponse(w), PlaintextSecret: w.Secret})
}

func (s *handlers) updateWebhook(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Admin, "webhookId")
	if err != nil {
		return err
	}
	r, err := parseWebhook(core.BodyOf(c), false)
	if err != nil {
		return err
	}
	w, err := s.webhooks().Update(c.UserContext(), webhookProject(a), id, webhook.Change{URL: r.URL, Events: r.Events, Enabled: r.Enabled})
	if err != nil {
		return err
	}
	return c.JSON(toWebhookResponse(w))
}

func (s *handlers) deleteWebhook(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Admin, "webhookId")
	if err != nil {
		return err
	}
	if err := s.webhooks().Delete(c.UserContext(), core.AuditActor(c), webhookProject(a), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
