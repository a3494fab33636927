package api

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
)

// stopping is the server's shutdown state, shared by the probes, the edge middleware
// and the uploads (docs/operations.md#stopping).
type stopping struct {
	// draining is set when the shutdown begins: /readyz answers 503 and every reply
	// says Connection: close, so keep-alive clients open their next request elsewhere
	// instead of losing it to a closed connection.
	draining atomic.Bool
	// hard is cancelled when the grace has run out: work that outlives a request's own
	// deadline (an upload still streaming) stops, cleans up and answers 503.
	hard     context.Context
	hardStop context.CancelFunc
}

func newStopping() stopping {
	ctx, cancel := context.WithCancel(context.Background())
	return stopping{hard: ctx, hardStop: cancel}
}

// Draining reports whether the shutdown has begun.
func (s *Server) Draining() bool { return s.stop.draining.Load() }

// untilHardStop returns a context that keeps parent's values but not its deadline or
// cancellation, and ends when the server's grace runs out.
func (s *Server) untilHardStop(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	stop := context.AfterFunc(s.stop.hard, cancel)
	return ctx, func() { stop(); cancel() }
}

// closeWhileDraining makes every reply during the shutdown close its connection.
func (s *Server) closeWhileDraining(c *fiber.Ctx) {
	if s.stop.draining.Load() {
		c.Set(fiber.HeaderConnection, "close")
	}
}

// hardStopWait bounds how long Shutdown waits, after the grace, for cancelled
// requests to clean up (remove a partial upload, answer 503).
const hardStopWait = 3 * time.Second

// Shutdown stops the server in order: /readyz turns 503 and replies say Connection:
// close at once; after drain (the load balancer's time to notice, TW_SHUTDOWN_DRAIN)
// the listener closes and in-flight requests get grace to finish; requests still
// running then (a slow upload) are cancelled and given a moment to clean up. It logs
// each step. Running out of grace is not an error: what could finish has, and the rest
// was stopped cleanly, so the process exits 0.
func (s *Server) Shutdown(drain, grace time.Duration) error {
	start := time.Now()
	s.stop.draining.Store(true)
	s.log.Info("shutdown: draining", "drain", drain.String(), "grace", grace.String(),
		"open_connections", s.App.Server().GetOpenConnectionsCount())
	if drain > 0 {
		time.Sleep(drain)
	}
	err := s.App.ShutdownWithTimeout(grace)
	if err == nil {
		s.stop.hardStop()
		s.log.Info("shutdown: done", "waited", time.Since(start).Round(time.Millisecond).String())
		return nil
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		s.stop.hardStop()
		return err
	}
	open := s.App.Server().GetOpenConnectionsCount()
	s.log.Warn("shutdown: grace ran out; cancelling the requests still running", "open_connections", open)
	s.stop.hardStop()
	deadline := time.Now().Add(hardStopWait)
	for s.App.Server().GetOpenConnectionsCount() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	s.log.Info("shutdown: done", "waited", time.Since(start).Round(time.Millisecond).String(),
		"cancelled_connections", open, "still_open", s.App.Server().GetOpenConnectionsCount())
	return nil
}
