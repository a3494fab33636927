package integration

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/integration"
	"github.com/taskweave/taskweave/domain/locale"
)

// incomingOK is the reply to every accepted or ignored incoming event
// (docs/api-conventions.md#incoming-provider-events).
var incomingOK = fiber.Map{"status": "ok"}

func (s *handlers) incomingGitHub(c *fiber.Ctx) error {
	return s.receiveIncoming(c, integration.GitHub, c.Get("X-Hub-Signature-256"), c.Get("X-GitHub-Event"), "incoming.INVALID_SIGNATURE")
}

func (s *handlers) incomingGitLab(c *fiber.Ctx) error {
	return s.receiveIncoming(c, integration.GitLab, c.Get("X-Gitlab-Token"), c.Get("X-Gitlab-Event"), "incoming.INVALID_TOKEN")
}

// receiveIncoming answers a provider: 200 once the payload and its parse job are
// committed (or when the project or integration is unknown, so nothing is stored), 401
// with the providers' own {"error": …} body for a wrong or missing credential
// (docs/api-conventions.md#incoming-provider-events), 400 with the usual error body for a
// signed body that is not JSON. The body and headers are used only within the request, so
// Fiber's reused buffers need no copy.
func (s *handlers) receiveIncoming(c *fiber.Ctx, p integration.Provider, credential, eventName, refusal string) error {
	_, err := s.integrations().Receive(c.UserContext(), integration.Incoming{
		Provider: p, ProjectKey: c.Params("projectKey"), Credential: credential, EventName: eventName, Body: c.Body(),
	})
	if errors.Is(err, integration.ErrUnauthenticated) {
		return c.Status(fiber.StatusUnauthorized).JSON(fiber.Map{"error": locale.T(core.Language(c), refusal)})
	}
	if err != nil {
		return err
	}
	return c.JSON(incomingOK)
}
