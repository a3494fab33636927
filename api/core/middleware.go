package core

import (
	"math"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/domain/auth"
)

// RequireAdmin allows system ADMINs only.
func RequireAdmin(c *fiber.Ctx) error {
	if p := Principal(c); p == nil || !p.IsAdmin() {
		return Forbidden("ADMIN_ONLY")
	}
	return c.Next()
}

// RateLimited applies the shared login/register limit per client address.
func (s *Env) RateLimited(c *fiber.Ctx) error {
	if err := Limit(c, s.Limiter, "auth", "auth:"+c.IP()); err != nil {
		return err
	}
	return c.Next()
}

// Limit counts the request in bucket of l and tells the client where it stands, on
// every reply of a limited route, 429 included: RateLimit-Policy and RateLimit (IETF
// httpapi draft "ratelimit-headers", policy naming the limit) and, when the window is
// full, the *auth.RateLimitError that Errors renders as 429 with Retry-After.
func Limit(c *fiber.Ctx, l *auth.Limiter, policy, bucket string) error {
	q, err := l.Take(c.UserContext(), bucket)
	if q.Limit > 0 {
		c.Set("RateLimit-Policy", strconv.Quote(policy)+";q="+strconv.Itoa(q.Limit)+";w="+wholeSeconds(q.Window))
		c.Set("RateLimit", strconv.Quote(policy)+";r="+strconv.Itoa(q.Remaining)+";t="+wholeSeconds(q.Reset))
	}
	return err
}

// wholeSeconds rounds d up to whole seconds, as the headers count them.
func wholeSeconds(d time.Duration) string {
	return strconv.Itoa(int(math.Ceil(d.Seconds())))
}
