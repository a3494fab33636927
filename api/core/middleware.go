package core

import "github.com/gofiber/fiber/v2"

// RequireAdmin allows system ADMINs only.
func RequireAdmin(c *fiber.Ctx) error {
	if p := Principal(c); p == nil || !p.IsAdmin() {
		return Forbidden("ADMIN_ONLY")
	}
	return c.Next()
}

// RateLimited applies the shared login/register limit per client address.
func (s *Env) RateLimited(c *fiber.Ctx) error {
	if err := s.Limiter.Hit(c.UserContext(), "auth:"+c.IP()); err != nil {
		return err
	}
	return c.Next()
}
