package api

import "github.com/gofiber/fiber/v2"

// riverUIRoutes mounts River UI at /admin/river/ (outside /api/v1: it has the ops
// page's cookie session besides bearer tokens). riverUIGate guards every path below it;
// the mutating calls of River UI's API are Taskweave's handlers, registered before the
// GET wildcard that hands pages, assets and River UI's read API to River UI.
func (s *Server) riverUIRoutes(app *fiber.App) {
	ui := s.deps.RiverUI
	if ui == nil {
		return
	}
	g := app.Group(riverUIPrefix, s.riverUIGate)
	g.Post("/api/jobs/cancel", s.riverUICancelJobs)
	g.Post("/api/jobs/retry", s.riverUIRetryJobs)
	g.Post("/api/jobs/delete", s.riverUIDeleteJobs)
	g.Put("/api/queues/:name/pause", s.riverUIPauseQueue)
	g.Put("/api/queues/:name/resume", s.riverUIResumeQueue)
	serve := s.riverUIServe(ui)
	// The entry point the ops page links to, and everything River UI serves below it.
	g.Get("/", serve)
	g.Get("/*", serve)
}
