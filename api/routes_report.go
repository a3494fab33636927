package api

import "github.com/gofiber/fiber/v2"

// reportRoutes registers the reports and the dashboard under /projects/:key.
func (s *Server) reportRoutes(r fiber.Router) {
	r.Get("/projects/:key/reports/burndown", s.reportBurndown)
	r.Get("/projects/:key/reports/velocity", s.reportVelocity)
	r.Get("/projects/:key/reports/cycle-time", s.reportCycleTime)

	r.Get("/projects/:key/dashboard", s.dashboardGet)
	r.Put("/projects/:key/dashboard/layout", s.dashboardPutLayout)
	r.Post("/projects/:key/dashboard/widgets", s.dashboardAddWidget)
	r.Delete("/projects/:key/dashboard/widgets/:widgetId", s.dashboardDeleteWidget)
}
