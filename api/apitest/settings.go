package apitest

import (
	"time"

	"github.com/taskweave/taskweave/api"
)

// LimitedAuth configures a rate limit of limit logins per window per client address,
// trusting X-Forwarded-For from 127.0.0.1 so tests can send from several addresses.
func LimitedAuth(limit int, window time.Duration) func(*api.Settings) {
	return func(s *api.Settings) {
		s.AuthRateLimit, s.AuthRateWindow = limit, window
		s.TrustedProxies = []string{"0.0.0.0", "127.0.0.1"}
	}
}
