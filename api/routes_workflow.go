package api

import "github.com/gofiber/fiber/v2"

// workflowRoutes registers the workflow endpoints on the authenticated /api/v1 router.
// Reads need project role VIEWER or better; every edit needs PROJECT_ADMIN.
func (s *Server) workflowRoutes(r fiber.Router) {
	r.Get("/projects/:key/workflows", s.listWorkflows)
	r.Get("/projects/:key/workflow", s.getWorkflow)
	r.Post("/projects/:key/workflow/statuses", s.createWorkflowStatus)
	r.Put("/projects/:key/workflow/statuses/:sid", s.updateWorkflowStatus)
	r.Delete("/projects/:key/workflow/statuses/:sid", s.deleteWorkflowStatus)
	r.Post("/projects/:key/workflow/transitions", s.createWorkflowTransition)
	r.Delete("/projects/:key/workflow/transitions/:tid", s.deleteWorkflowTransition)
	r.Put("/projects/:key/workflow/transitions/:tid/guards", s.putWorkflowGuards)
	r.Put("/projects/:key/workflow/layout", s.putWorkflowLayout)
}
