package integration

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/integration"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
)

// integrationResponse is Integration in api/openapi/55-integrations.yaml, plus webhookUrl
// (the address to configure at the provider); the secret is shown only on create.
type integrationResponse struct {
	ID         uuid.UUID `json:"id"`
	Provider   string    `json:"provider"`
	RepoURL    *string   `json:"repoUrl"`
	CreatedAt  string    `json:"createdAt"`
	WebhookURL string    `json:"webhookUrl"`
}

// integrationCreatedResponse is the create reply, the only one carrying the secret.
type integrationCreatedResponse struct {
	ID              uuid.UUID `json:"id"`
	Provider        string    `json:"provider"`
	WebhookURL      string    `json:"webhookUrl"`
	PlaintextSecret string    `json:"plaintextSecret"`
	RepoURL         *string   `json:"repoUrl"`
	CreatedAt       string    `json:"createdAt"`
}

type createIntegrationRequest struct {
	Provider *string `json:"provider"`
	RepoURL  *string `json:"repoUrl"`
}

// integrations is the integration service over the server's database, bus and audit.
func (s *handlers) integrations() *integration.Service {
	return integration.NewService(s.DB.Bun, s.Bus, s.Audit)
}

// integrationWebhookURL is where the provider posts the project's events.
func (s *handlers) integrationWebhookURL(p integration.Provider, projectKey string) string {
	return strings.TrimRight(s.Cfg.BaseURL, "/") + "/api/v1/integrations/" + p.PathSegment() + "/" + projectKey + "/webhook"
}

// parseCreateIntegration decodes a create body: provider in any letter case, repoUrl
// optional (blank means none), an http(s) URL of at most 2048 characters.
func parseCreateIntegration(body core.Body) (integration.NewIntegration, error) {
	var r createIntegrationRequest
	if err := body.Decode(&r); err != nil {
		return integration.NewIntegration{}, err
	}
	if r.Provider == nil {
		return integration.NewIntegration{}, core.Required("provider")
	}
	p, ok := integration.ParseProvider(*r.Provider)
	if !ok {
		return integration.NewIntegration{}, core.BadRequest("UNKNOWN_PROVIDER", "field", "provider", "values", "GITHUB, GITLAB")
	}
	in := integration.NewIntegration{Provider: p}
	var f core.Fields
	if r.RepoURL != nil {
		if u := strings.TrimSpace(*r.RepoURL); u != "" {
			f.Text("repoUrl", u, false, integration.MaxRepoURLLength)
			f.Link("repoUrl", u)
			in.RepoURL = &u
		}
	}
	return in, f.Err()
}

func (s *handlers) toIntegrationResponse(row *store.ProjectIntegration, projectKey string) integrationResponse {
	p := integration.Provider(row.Provider)
	return integrationResponse{ID: row.ID, Provider: row.Provider, RepoURL: row.RepoURL, CreatedAt: core.Instant(row.CreatedAt),
		WebhookURL: s.integrationWebhookURL(p, projectKey)}
}

func (s *handlers) listIntegrations(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	rows, err := integration.List(c.UserContext(), s.DB.Bun, a.Project.ID)
	if err != nil {
		return err
	}
	out := make([]integrationResponse, 0, len(rows))
	for i := range rows {
		out = append(out, s.toIntegrationResponse(&rows[i], a.Project.Key))
	}
	return c.JSON(out)
}

func (s *handlers) createIntegration(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	in, err := parseCreateIntegration(core.BodyOf(c))
	if err != nil {
		return err
	}
	row, err := s.integrations().Create(c.UserContext(), core.AuditActor(c), a.Project.ID, in)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(integrationCreatedResponse{
		ID: row.ID, Provider: row.Provider, WebhookURL: s.integrationWebhookURL(in.Provider, a.Project.Key),
		PlaintextSecret: row.WebhookSecret, RepoURL: row.RepoURL, CreatedAt: core.Instant(row.CreatedAt),
	})
}

func (s *handlers) deleteIntegration(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Admin, "integrationId")
	if err != nil {
		return err
	}
	if err := s.integrations().Delete(c.UserContext(), core.AuditActor(c), a.Project.ID, id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
