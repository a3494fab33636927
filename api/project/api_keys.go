package project

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
)

// apiKeyResponse is a project API key in lists; the plaintext is never listed.
type apiKeyResponse struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	KeyPrefix  string  `json:"keyPrefix"`
	LastUsedAt *string `json:"lastUsedAt"`
	ExpiresAt  *string `json:"expiresAt"`
	CreatedAt  string  `json:"createdAt"`
}

// apiKeyCreatedResponse is the create reply, the only one carrying the plaintext.
type apiKeyCreatedResponse struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	KeyPrefix string  `json:"keyPrefix"`
	Plaintext string  `json:"plaintext"`
	ExpiresAt *string `json:"expiresAt"`
	CreatedAt string  `json:"createdAt"`
}

func toAPIKeyResponse(k *store.ProjectAPIKey) apiKeyResponse {
	return apiKeyResponse{ID: k.ID.String(), Name: k.Name, KeyPrefix: k.KeyPrefix,
		LastUsedAt: core.InstantPtr(k.LastUsedAt), ExpiresAt: core.InstantPtr(k.ExpiresAt), CreatedAt: core.Instant(k.CreatedAt)}
}

type createAPIKeyRequest struct {
	Name      *string    `json:"name"`
	ExpiresAt *time.Time `json:"expiresAt"`
}

func parseCreateAPIKey(body core.Body, now time.Time) (project.NewAPIKey, error) {
	var r createAPIKeyRequest
	if err := body.Decode(&r); err != nil {
		return project.NewAPIKey{}, err
	}
	if r.Name == nil {
		return project.NewAPIKey{}, core.Required("name")
	}
	var f core.Fields
	f.Text("name", *r.Name, true, core.MaxName)
	if r.ExpiresAt != nil && !r.ExpiresAt.After(now) {
		f.Add("expiresAt", "PAST", "field.PAST")
	}
	return project.NewAPIKey{Name: *r.Name, ExpiresAt: r.ExpiresAt}, f.Err()
}

func (s *handlers) listAPIKeys(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	ks, err := project.APIKeys(c.UserContext(), s.DB.Bun, a.Project.ID)
	if err != nil {
		return err
	}
	out := make([]apiKeyResponse, 0, len(ks))
	for i := range ks {
		out = append(out, toAPIKeyResponse(&ks[i]))
	}
	return c.JSON(out)
}

func (s *handlers) createAPIKey(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Member)
	if err != nil {
		return err
	}
	in, err := parseCreateAPIKey(core.BodyOf(c), time.Now())
	if err != nil {
		return err
	}
	k, plain, err := s.projects().CreateAPIKey(c.UserContext(), core.AuditActor(c), a, in)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(apiKeyCreatedResponse{ID: k.ID.String(), Name: k.Name, KeyPrefix: k.KeyPrefix,
		Plaintext: plain, ExpiresAt: core.InstantPtr(k.ExpiresAt), CreatedAt: core.Instant(k.CreatedAt)})
}

func (s *handlers) deleteAPIKey(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Admin, "keyId")
	if err != nil {
		return err
	}
	if err := s.projects().DeleteAPIKey(c.UserContext(), core.AuditActor(c), a, id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
