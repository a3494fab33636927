package api

import "github.com/gofiber/fiber/v2"

// auditRoutes registers the audit endpoints: admin ones on admin (system ADMIN) and
// the project audit on the authenticated router r. There is deliberately no route that
// changes or deletes an audit event; the table's trigger refuses it as well.
func (s *Server) auditRoutes(r, admin fiber.Router) {
	admin.Get("/audit", s.listAuditEvents)
	admin.Get("/audit/export", s.exportAuditEvents)
	admin.Get("/audit/config", s.getAuditConfig)
	admin.Put("/audit/config", s.putAuditConfig)
	r.Get("/projects/:key/audit", s.listProjectAuditEvents)
}
