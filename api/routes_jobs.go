package api

import "github.com/gofiber/fiber/v2"

// jobRoutes registers the job operations for support staff on the admin group (system
// ADMIN only; docs/operations.md#the-ops-page).
func (s *Server) jobRoutes(admin fiber.Router) {
	admin.Get("/jobs", s.listJobs)
	admin.Get("/jobs/:id", s.getJob)
	admin.Post("/jobs/:id/retry", s.retryJob)
	admin.Post("/jobs/:id/cancel", s.cancelJob)
	admin.Get("/queues", s.listQueues)
}

// opsRoutes registers the server-rendered /admin/ops/ page (outside /api/v1). It has its
// own cookie session, so it sits before the /api/v1 bearer middleware.
func (s *Server) opsRoutes(app *fiber.App) {
	ops := app.Group("/admin/ops", s.opsHeaders)
	ops.Get("/", s.opsPage(s.opsIndex))
	ops.Post("/login", s.opsPage(s.opsLogin))
	ops.Post("/logout", s.opsPage(s.opsLogout))
	ops.Get("/jobs/:id", s.opsPage(s.opsJob))
}
