package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
)

// sprintRoutes registers sprints, the board and the backlog under /projects/:key.
func (s *Server) sprintRoutes(r fiber.Router) {}

// registerSprintConsumers registers the sprint events' own consumers (audit).
func registerSprintConsumers(bus *event.Bus, rec *audit.Recorder) {}
