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

// Quota is a bucket's state after a hit: what the RateLimit and RateLimit-Policy reply
// headers tell a client.
type Quota struct {
	// Limit hits are allowed per Window.
	Limit  int
	Window time.Duration
	// Remaining hits are left in the window after this one (0 when refused).
	Remaining int
	// Reset is how long until the oldest hit leaves the window, freeing one.
	Reset time.Duration
}

// Hit counts one request of bucket, or returns a *RateLimitError when the window is full.
func (l *Limiter) Hit(ctx context.Context, bucket string) error {
	_, err := l.Take(ctx, bucket)
	return err
}

// Take counts one request of bucket like Hit and answers the bucket's state too, also
// when the window is full (the error is then a *RateLimitError).
func (l *Limiter) Take(ctx context.Context, bucket string) (Quota, error) {
	var row struct {
		Wait      float64
		Remaining int
		Reset     float64
	}
	err := l.db.NewRaw("SELECT wait, remaining, reset FROM rate_limit_take(?, ?, make_interval(secs => ?))",
		bucket, l.limit, l.window.Seconds()).Scan(ctx, &row)
	if err != nil {
		return Quota{}, fmt.Errorf("rate limit %s: %w", bucket, err)
	}
	q := Quota{Limit: l.limit, Window: l.window, Remaining: row.Remaining, Reset: seconds(row.Reset)}
	if row.Wait > 0 {
		return q, &RateLimitError{RetryAfter: seconds(row.Wait)}
	}
	return q, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
