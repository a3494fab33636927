package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gofiber/contrib/websocket"
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/api/stomp"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/realtime"
)

// stompRoutes registers the STOMP-over-WebSocket endpoints /ws-stomp and /ws. The hub's
// Postgres listener starts when the app listens (or at the first subscription) and
// stops, with every session, when the app shuts down.
func (s *Server) stompRoutes(app *fiber.App) {
	hub := stomp.NewHub(stomp.Config{
		Log: s.log,
		// The web client reconnects with the header it first built, so an expired access
		// token still opens a socket within the refresh-token lifetime, while the login
		// session that issued it lives (docs/api-conventions.md#real-time).
		Authenticate: func(ctx context.Context, token string) (*auth.Principal, error) {
			return s.authn.AccessToken(ctx, token, s.auth.Tokens().RefreshTTL())
		},
		MayRead: func(ctx context.Context, p *auth.Principal, key string) (bool, error) {
			a, err := project.Load(ctx, s.db.Bun, key, p)
			if errors.Is(err, project.ErrNotFound) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			return a.Role != project.None, nil
		},
	})
	listener := realtime.NewListener(s.db.Pool.Config().ConnConfig, s.log, hub.Deliver)
	// Messages and revocation notices sent while the listener was reconnecting are
	// lost: subscribed sessions are told to reload, the others checked again.
	listener.OnReconnect(hub.Resync)
	hub.Attach(listener)
	app.Hooks().OnListen(func(fiber.ListenData) error {
		hub.Start()
		return nil
	})
	app.Hooks().OnShutdown(func() error {
		hub.Close()
		return nil
	})
	upgrade := hub.Handler()
	// The upgraded connection outlives the request: the session runs on the hub's own
	// context after the handshake, so edge's request deadline never cuts it.
	handler := func(c *fiber.Ctx) error {
		if !websocket.IsWebSocketUpgrade(c) {
			return core.NewError(http.StatusUpgradeRequired, "UPGRADE_REQUIRED", "WEBSOCKET_REQUIRED")
		}
		if err := upgrade(c); err != nil {
			if errors.Is(err, fiber.ErrUpgradeRequired) {
				return core.NewError(http.StatusUpgradeRequired, "UPGRADE_REQUIRED", "WEBSOCKET_REQUIRED")
			}
			return err
		}
		return nil
	}
	app.Get("/ws-stomp", handler)
	app.Get("/ws", handler)
}
