package core

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/locale"
)

// PrincipalKey holds the authenticated caller (*auth.Principal) in the request's locals.
const PrincipalKey = "principal"

// PendingKey holds an access token verified without its user row (deferredAuth), until
// Env.ProjectAccess reads the row with the project.
const PendingKey = "pendingAccess"

// PendingCredentialKey holds a personal access token or API key not checked yet
// (*auth.PendingCredential, deferredAuth), until Env.ProjectAccess reads its row with
// the project.
const PendingCredentialKey = "pendingCredential"

// Principal is the authenticated caller, or nil.
func Principal(c *fiber.Ctx) *auth.Principal {
	p, _ := c.Locals(PrincipalKey).(*auth.Principal)
	return p
}

// Language is the reply language: the caller's stored one, else Accept-Language.
func Language(c *fiber.Ctx) string {
	var stored *string
	if p := Principal(c); p != nil {
		stored = p.Language
	}
	return locale.Pick(stored, c.Get(fiber.HeaderAcceptLanguage))
}

// Meta is what the audit log keeps about the request.
func Meta(c *fiber.Ctx) auth.Meta {
	return auth.Meta{IP: c.IP(), UserAgent: c.Get(fiber.HeaderUserAgent)}
}

// AuditActor is the authenticated caller as the audit log records them.
func AuditActor(c *fiber.Ctx) audit.Actor {
	p, m := Principal(c), Meta(c)
	return audit.Actor{UserID: p.UserID, Email: p.Email, IP: m.IP, UserAgent: m.UserAgent}
}

// IsUnauthenticated is whether err is the refusal of a missing or bad credential.
func IsUnauthenticated(err error) bool { return err != nil && errors.Is(err, auth.ErrUnauthenticated) }
