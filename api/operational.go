package api

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// operationalRoutes are the public probes and the Prometheus endpoint, unless
// Config.MetricsOff moves that off the API's port (TW_METRICS_ADDR).
func (s *Server) operationalRoutes(app *fiber.App) {
	app.Get("/healthz", func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"status": "UP"})
	})
	app.Get("/readyz", func(c *fiber.Ctx) error {
		if s.Draining() {
			return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "DOWN"})
		}
		if s.deps.Ready == nil {
			return c.JSON(fiber.Map{"status": "UP"})
		}
		if err := s.deps.Ready(2 * time.Second); err != nil {
			s.log.Warn("not ready", "err", err)
			return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "DOWN"})
		}
		if err := s.storageReady(); err != nil {
			s.log.Warn("not ready: attachment storage", "err", err)
			return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "DOWN"})
		}
		return c.JSON(fiber.Map{"status": "UP"})
	})
	if s.deps.Registry != nil && !s.cfg.MetricsOff {
		app.Get("/metrics", adaptor.HTTPHandler(promhttp.HandlerFor(s.deps.Registry, promhttp.HandlerOpts{})))
	}
}

// storageReady reports an attachment storage that does not answer (the bucket).
func (s *Server) storageReady() error {
	if s.deps.Attachments == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.deps.Attachments.Check(ctx)
}
