package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/domain/event"
)

// stompRoutes registers the STOMP-over-WebSocket endpoints /ws-stomp and /ws.
func (s *Server) stompRoutes(app *fiber.App) {}

// registerRealtime registers the consumer that pushes board messages after commit.
func (s *Server) registerRealtime(bus *event.Bus) {}
