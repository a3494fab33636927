package admin

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
)

// handlers are the system ADMIN's endpoints and pages: users, the audit log, jobs and
// queues, the ops page and River UI.
type handlers struct{ *core.Env }

// PageRoutes registers the server-rendered ops page, then River UI, both outside
// /api/v1 with their own cookie session (before the /api/v1 bearer middleware).
func PageRoutes(app fiber.Router, env *core.Env) {
	s := &handlers{env}
	s.opsRoutes(app)
	s.riverUIRoutes(app)
}

// Routes registers the admin endpoints on admin (the /api/v1/admin group, system ADMIN
// only): users, the audit log and its settings, jobs and queues; and a project's audit
// on the authenticated router r.
func Routes(r, admin fiber.Router, env *core.Env) {
	s := &handlers{env}
	admin.Get("/users", s.listUsers)
	admin.Post("/users/:id/deactivate", s.deactivateUser)
	admin.Post("/users/:id/activate", s.activateUser)
	admin.Delete("/users/:id", s.deleteUser)
	admin.Post("/users/:id/sign-out", s.signOutUser)
	s.auditRoutes(r, admin)
	s.jobRoutes(admin)
}

// jobRoutes registers the job operations for support staff on the admin group (system
// ADMIN only; docs/operations.md#the-ops-page).
func (s *handlers) jobRoutes(admin fiber.Router) {
	admin.Get("/jobs", s.listJobs)
	admin.Get("/jobs/:id", s.getJob)
	admin.Post("/jobs/:id/retry", s.retryJob)
	admin.Post("/jobs/:id/cancel", s.cancelJob)
	admin.Get("/queues", s.listQueues)
}

// opsRoutes registers the server-rendered /admin/ops/ page (outside /api/v1). It has its
// own cookie session, so it sits before the /api/v1 bearer middleware.
func (s *handlers) opsRoutes(app fiber.Router) {
	ops := app.Group("/admin/ops", s.opsHeaders)
	ops.Get("/", s.opsPage(s.opsIndex))
	ops.Post("/login", s.opsPage(s.opsLogin))
	ops.Post("/logout", s.opsPage(s.opsLogout))
	ops.Get("/jobs/:id", s.opsPage(s.opsJob))
}

// auditRoutes registers the audit endpoints: admin ones on admin (system ADMIN) and
// the project audit on the authenticated router r. There is deliberately no route that
// changes or deletes an audit event; the table's trigger refuses it as well.
func (s *handlers) auditRoutes(r, admin fiber.Router) {
	admin.Get("/audit", s.listAuditEvents)
	admin.Get("/audit/export", s.exportAuditEvents)
	admin.Get("/audit/config", s.getAuditConfig)
	admin.Put("/audit/config", s.putAuditConfig)
	r.Get("/projects/:key/audit", s.listProjectAuditEvents)
}

// riverUIRoutes mounts River UI at /admin/river/ (outside /api/v1: it has the ops
// page's cookie session besides bearer tokens). riverUIGate guards every path below it;
// the mutating calls of River UI's API are Taskweave's handlers, registered before the
// GET wildcard that hands pages, assets and River UI's read API to River UI.
func (s *handlers) riverUIRoutes(app fiber.Router) {
	ui := s.RiverUI
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
