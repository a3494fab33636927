package account

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
)

// signOutEverywhere ends every login session of the caller (POST
// /me/sign-out-everywhere): their refresh tokens, the access tokens they issued, this
// request's included, and their live STOMP sessions on every replica.
func (s *handlers) signOutEverywhere(c *fiber.Ctx) error {
	p := core.Principal(c)
	if err := s.Auth.SignOutEverywhere(c.UserContext(), p, p.UserID, core.Meta(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
