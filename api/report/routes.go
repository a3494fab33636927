package report

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
)

// handlers are the report and dashboard endpoints.
type handlers struct{ *core.Env }

// Routes registers the reports and the dashboard under /projects/:key.
func Routes(r fiber.Router, env *core.Env) {
	s := &handlers{env}
	r.Get("/projects/:key/reports/burndown", s.reportBurndown)
	r.Get("/projects/:key/reports/velocity", s.reportVelocity)
	r.Get("/projects/:key/reports/cycle-time", s.reportCycleTime)

	r.Get("/projects/:key/dashboard", s.dashboardGet)
	r.Put("/projects/:key/dashboard/layout", s.dashboardPutLayout)
	r.Post("/projects/:key/dashboard/widgets", s.dashboardAddWidget)
	r.Delete("/projects/:key/dashboard/widgets/:widgetId", s.dashboardDeleteWidget)
}
