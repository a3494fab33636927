package api

import "github.com/gofiber/fiber/v2"

// taskRoutes registers the task endpoints (docs/tasks.md): a task's progress and
// cancellation, and the project operations that start one.
func (s *Server) taskRoutes(r fiber.Router) {
	r.Get("/tasks", s.listTasks)
	r.Get("/tasks/:id", s.getTask)
	r.Post("/tasks/:id/cancel", s.cancelTask)
	r.Get("/tasks/:id/result", s.taskResult)
	r.Post("/tasks/:id/undo", s.undoTask)
	r.Post("/projects/:key/export", s.exportProject)
	r.Post("/projects/:key/import", s.importProject)
	r.Post("/projects/:key/issues/bulk", s.bulkChangeIssues)
}
