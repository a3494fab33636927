package servicedesk

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/servicedesk"
)

// handlers are the service desk and incident endpoints.
type handlers struct{ *core.Env }

// PublicRoutes registers the PUBLIC ticket form, rate limited per client
// address; it comes before requireUser.
func PublicRoutes(r fiber.Router, env *core.Env) {
	s := &handlers{env}
	m := servicedesk.NewMetrics(s.Registry)
	r.Post("/projects/:key/service-desk/tickets", s.ticketRateLimited, s.submitTicket(m))
}

// Routes registers the desk, its tickets, SLA policies, escalation rules and calendars
// under /projects/:key/service-desk, and the incidents under /projects/:key/incidents.
func Routes(r fiber.Router, env *core.Env) {
	s := &handlers{env}
	r.Post("/projects/:key/service-desk/enable", s.enableServiceDesk)
	r.Post("/projects/:key/service-desk/email/verify", s.verifyDeskEmail)
	r.Post("/projects/:key/service-desk/email/resend", s.resendDeskEmail)
	r.Get("/projects/:key/service-desk", s.getServiceDesk)
	r.Get("/projects/:key/service-desk/tickets", s.listTickets)
	r.Post("/projects/:key/service-desk/sla-policies", s.createSLAPolicy)
	r.Get("/projects/:key/service-desk/sla-policies", s.listSLAPolicies)
	r.Delete("/projects/:key/service-desk/sla-policies/:id", s.deleteSLAPolicy)
	r.Post("/projects/:key/service-desk/sla-policies/:id/escalation-rules", s.createEscalationRule)
	r.Get("/projects/:key/service-desk/calendars", s.listCalendars)
	r.Post("/projects/:key/service-desk/calendars", s.createCalendar)
	r.Put("/projects/:key/service-desk/calendars/:id", s.updateCalendar)
	r.Delete("/projects/:key/service-desk/calendars/:id", s.deleteCalendar)

	r.Post("/projects/:key/incidents", s.createIncident)
	r.Get("/projects/:key/incidents", s.listIncidents)
	r.Patch("/projects/:key/incidents/:id", s.resolveIncident)
}

// AdminRoutes registers a system ADMIN's list and approval of desks' pending
// addresses under /admin (the admin group's system ADMIN check).
func AdminRoutes(admin fiber.Router, env *core.Env) {
	s := &handlers{env}
	admin.Get("/service-desk/addresses", s.listPendingDeskEmails)
	admin.Post("/service-desk/addresses/:projectKey/approve", s.approveDeskEmail)
}
