package auth

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/uptrace/bun"
)

// RateLimitError says how long the client must wait.
type RateLimitError struct{ RetryAfter time.Duration }

func (e *RateLimitError) Error() string { return fmt.Sprintf("rate limited for %s", e.RetryAfter) }

// RetryAfterSeconds is the Retry-After header value: whole seconds, at least 1.
func (e *RateLimitError) RetryAfterSeconds() int {
	return max(1, int(math.Ceil(e.RetryAfter.Seconds())))
}

// Limiter is a sliding-window log kept in Postgres, so every API replica shares one
// count per client address.
type Limiter struct {
	db     bun.IDB
	limit  int
	window time.Duration
}

// NewLimiter allows limit hits per window per bucket.
func NewLimiter(db bun.IDB, limit int, window time.Duration) *Limiter {
	return &Limiter{db: db, limit: limit, window: window}
}

// Window is the sliding window's length.
func (l *Limiter) Window() time.Duration { return l.window }

// Hit counts one request of bucket, or returns a *RateLimitError when the window is full.
func (l *Limiter) Hit(ctx context.Context, bucket string) error {
	var wait float64
	err := l.db.NewRaw("SELECT rate_limit_hit(?, ?, make_interval(secs => ?))", bucket, l.limit, l.window.Seconds()).Scan(ctx, &wait)
	if err != nil {
		return fmt.Errorf("rate limit %s: %w", bucket, err)
	}
	if wait > 0 {
		return &RateLimitError{RetryAfter: time.Duration(wait * float64(time.Second))}
	}
	return nil
}
