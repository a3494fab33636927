package core

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/taskweave/taskweave/store"
)

// FailureLog writes the log line of a request that failed with a 5xx. One caused by an
// unavailable database (refusing connections, gone, restarting) is logged once per
// unavailableLogEvery with how many more failed the same way in between, instead of
// once per request: an outage under load once wrote 48,108 lines in 20 s
// (docs/operations.md#a-refusing-database). Every other failure is logged as it
// happens. Only the log depends on this process's memory; answers do not.
type FailureLog struct {
	log *slog.Logger

	mu         sync.Mutex
	last       time.Time // when an unavailable failure was last logged
	suppressed int       // unavailable failures not logged since
}

// unavailableLogEvery is the least time between two log lines of unavailable failures.
const unavailableLogEvery = 10 * time.Second

// NewFailureLog logs to log.
func NewFailureLog(log *slog.Logger) *FailureLog { return &FailureLog{log: log} }

// Failed logs one failed request.
func (f *FailureLog) Failed(ctx context.Context, method, path string, status int, err error) {
	if !errors.Is(store.Translate(err), store.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
		f.log.ErrorContext(ctx, "request failed", "method", method, "path", path, "status", status, "err", err)
		return
	}
	f.mu.Lock()
	now := time.Now()
	if now.Sub(f.last) < unavailableLogEvery {
		f.suppressed++
		f.mu.Unlock()
		return
	}
	suppressed := f.suppressed
	f.last, f.suppressed = now, 0
	f.mu.Unlock()
	f.log.ErrorContext(ctx, "request failed: database unavailable", "method", method, "path", path, "status", status, "err", err,
		"more_since_last_line", suppressed, "window", unavailableLogEvery.String())
}
