package integration

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
)

// webhookDeliveryPageSize is the deliveries list's default size
// (docs/api-conventions.md#pages).
const webhookDeliveryPageSize = 20

// webhookDeliveryResponse is WebhookDelivery in api/openapi/50-webhooks.yaml (+
// nextRetryAt, lastError).
type webhookDeliveryResponse struct {
	ID             string  `json:"id"`
	WebhookID      string  `json:"webhookId"`
	EventType      string  `json:"eventType"`
	Payload        string  `json:"payload"`
	ResponseStatus *int    `json:"responseStatus"`
	ResponseBody   *string `json:"responseBody"`
	AttemptCount   int     `json:"attemptCount"`
	DeliveredAt    *string `json:"deliveredAt"`
	CreatedAt      string  `json:"createdAt"`
	NextRetryAt    *string `json:"nextRetryAt"`
	LastError      *string `json:"lastError"`
}

func toWebhookDeliveryResponse(d *store.WebhookDelivery) webhookDeliveryResponse {
	return webhookDeliveryResponse{ID: d.ID.String(), WebhookID: d.WebhookID.String(), EventType: d.EventType,
		Payload: d.Payload, ResponseStatus: d.ResponseStatus, ResponseBody: d.ResponseBody, AttemptCount: d.AttemptCount,
		DeliveredAt: core.InstantPtr(d.DeliveredAt), CreatedAt: core.Instant(d.CreatedAt), NextRetryAt: core.InstantPtr(d.NextRetryAt),
		LastError: d.LastError}
}

func (s *handlers) listWebhookDeliveries(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Viewer, "webhookId")
	if err != nil {
		return err
	}
	pr, err := core.ParsePage(c, webhookDeliveryPageSize)
	if err != nil {
		return err
	}
	ds, err := s.webhooks().Deliveries(c.UserContext(), a.Project.ID, id, pr.Offset(), pr.Size)
	if err != nil {
		return err
	}
	out := make([]webhookDeliveryResponse, 0, len(ds))
	for i := range ds {
		out = append(out, toWebhookDeliveryResponse(&ds[i]))
	}
	return c.JSON(out)
}

func (s *handlers) pingWebhook(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Admin, "webhookId")
	if err != nil {
		return err
	}
	// The body is optional and has no members; a malformed one is still refused.
	var none struct{}
	if err := core.DecodeOptional(c, &none); err != nil {
		return err
	}
	d, err := s.webhooks().Ping(c.UserContext(), webhookProject(a), id)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toWebhookDeliveryResponse(d))
}

func (s *handlers) redeliverWebhook(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Admin, "webhookId")
	if err != nil {
		return err
	}
	deliveryID, err := core.PathUUID(c, "deliveryId")
	if err != nil {
		return err
	}
	d, err := s.webhooks().Redeliver(c.UserContext(), webhookProject(a), id, deliveryID)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(toWebhookDeliveryResponse(d))
}
