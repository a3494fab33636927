package webhook

import "time"

// Config is the delivery configuration shared by the API (URL checks, test pings) and
// the workers (sending, retries, cleanup); cmd fills it from TW_WEBHOOK_*.
type Config struct {
	// AllowPrivate lets webhooks target loopback and private addresses (tests, dev).
	AllowPrivate bool
	// Resolver looks webhook hosts up, at save and at dial time; nil means
	// net.DefaultResolver (tests give a fake one).
	Resolver Resolver
	// RetryDelays are the waits after failed attempt 1, 2, ...; the attempt after the
	// last delay is final. Default 60s, 300s.
	RetryDelays []time.Duration
	// HeaderPrefix prefixes the Event, Signature and Delivery headers. Default X-Taskweave.
	HeaderPrefix string
	// Retention is how long delivery records are kept. Default 720h.
	Retention time.Duration
	// Timeout bounds one attempt. Default 10s.
	Timeout time.Duration
}

// WithDefaults fills the zero members with the TW_WEBHOOK_* defaults (README.md#configuration).
func (c Config) WithDefaults() Config {
	if len(c.RetryDelays) == 0 {
		c.RetryDelays = []time.Duration{60 * time.Second, 300 * time.Second}
	}
	if c.HeaderPrefix == "" {
		c.HeaderPrefix = "X-Taskweave"
	}
	if c.Retention <= 0 {
		c.Retention = 720 * time.Hour
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	return c
}
