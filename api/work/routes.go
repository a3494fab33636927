package work

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/issue"
)

// handlers are the endpoints of issues and what hangs off them: versions, custom
// fields, sprints, the board and backlog, comments, activity and attachments.
type handlers struct {
	*core.Env
	// boards keeps encoded boards between requests (boardCache).
	boards *boardCache
	// matches keeps issue lists (a cf filter's matches, a project's update order)
	// between requests, proven current on every read (issue.Matches).
	matches *issue.Matches
}

// Routes registers the issues and versions, the custom fields, the sprints, board and
// backlog, the comments and activity, the attachments and the tasks (bulk change,
// export, import) on the authenticated /api/v1 router.
func Routes(r fiber.Router, env *core.Env) {
	s := &handlers{Env: env, boards: newBoardCache(boardCacheBudget), matches: issue.NewMatches(issue.MatchesBudget)}
	s.issueRoutes(r)
	s.customFieldRoutes(r)
	s.sprintRoutes(r)
	s.commentRoutes(r)
	s.attachmentRoutes(r)
	s.taskRoutes(r)
}

// taskRoutes registers the task endpoints (docs/tasks.md): a task's progress and
// cancellation, and the project operations that start one: bulk change, export, import.
func (s *handlers) taskRoutes(r fiber.Router) {
	r.Get("/tasks", s.listTasks)
	r.Get("/tasks/:id", s.getTask)
	r.Post("/tasks/:id/cancel", s.cancelTask)
	r.Get("/tasks/:id/result", s.taskResult)
	r.Post("/tasks/:id/undo", s.undoTask)
	r.Post("/projects/:key/export", s.exportProject)
	r.Post("/projects/:key/import", s.importProject)
	r.Post("/projects/:key/issues/bulk", s.bulkChangeIssues)
}

// issueRoutes registers the issue endpoints on the authenticated /api/v1 router.
// {issueKey} is an issue key (ABC-12) or the issue's UUID on every method.
func (s *handlers) issueRoutes(r fiber.Router) {
	r.Get("/search", s.search)
	r.Get("/projects/:key/issues", s.listIssues)
	r.Post("/projects/:key/issues", s.createIssue)
	r.Get("/projects/:key/issues/:issueKey", s.getIssue)
	r.Patch("/projects/:key/issues/:issueKey", s.patchIssue)
	r.Delete("/projects/:key/issues/:issueKey", s.deleteIssue)

	r.Get("/projects/:key/versions", s.listVersions)
	r.Post("/projects/:key/versions", s.createVersion)
	r.Put("/projects/:key/versions/:id", s.renameVersion)
	r.Delete("/projects/:key/versions/:id", s.deleteVersion)
}

// customFieldRoutes registers the custom field endpoints on the authenticated /api/v1
// router: reads need any project role, writes MEMBER or ADMIN. The literal reorder path
// is registered before {id}, so it is never read as an id.
func (s *handlers) customFieldRoutes(r fiber.Router) {
	r.Get("/projects/:key/custom-fields", s.listCustomFields)
	r.Post("/projects/:key/custom-fields", s.createCustomField)
	r.Put("/projects/:key/custom-fields/reorder", s.reorderCustomFields)
	r.Put("/projects/:key/custom-fields/:id", s.updateCustomField)
	r.Delete("/projects/:key/custom-fields/:id", s.deleteCustomField)
	r.Post("/projects/:key/custom-fields/:id/options", s.createCustomFieldOption)
	r.Put("/projects/:key/custom-fields/:id/options/:optionId", s.updateCustomFieldOption)
	r.Delete("/projects/:key/custom-fields/:id/options/:optionId", s.deleteCustomFieldOption)
}

// sprintRoutes registers sprints, the board and the backlog under /projects/:key.
// {issueId} of the sprint issue routes is an issue key (ABC-12) or the issue's UUID.
// There is deliberately no sprint delete.
func (s *handlers) sprintRoutes(r fiber.Router) {
	r.Get("/projects/:key/sprints", s.listSprints)
	r.Post("/projects/:key/sprints", s.createSprint)
	r.Patch("/projects/:key/sprints/:sprintId", s.patchSprint)
	r.Post("/projects/:key/sprints/:sprintId/start", s.startSprint)
	r.Post("/projects/:key/sprints/:sprintId/complete", s.completeSprint)
	r.Put("/projects/:key/sprints/:sprintId/issues/:issueId", s.addSprintIssue)
	r.Delete("/projects/:key/sprints/:sprintId/issues/:issueId", s.removeSprintIssue)

	r.Get("/projects/:key/board", s.getBoard)
	r.Patch("/projects/:key/board/move", s.moveOnBoard)
	r.Get("/projects/:key/backlog", s.getBacklog)
}

// commentRoutes registers comments and the activity feed under
// /projects/:key/issues/:issueKey; {issueKey} is an issue key (ABC-12) or the issue's
// UUID, as on the issue endpoints.
func (s *handlers) commentRoutes(r fiber.Router) {
	r.Get("/projects/:key/issues/:issueKey/comments", s.listComments)
	r.Post("/projects/:key/issues/:issueKey/comments", s.createComment)
	r.Put("/projects/:key/issues/:issueKey/comments/:commentId", s.editComment)
	r.Delete("/projects/:key/issues/:issueKey/comments/:commentId", s.deleteComment)
	r.Get("/projects/:key/issues/:issueKey/activity", s.listActivity)
}

// attachmentRoutes registers the attachment endpoints under /projects/:key/issues/:issueKey.
// The upload's body is streamed: core.BodyGuard recognizes its path (uploadPath) and leaves
// the body unread for it, so keep the two in step.
func (s *handlers) attachmentRoutes(r fiber.Router) {
	r.Post("/projects/:key/issues/:issueKey/attachments", s.uploadAttachment)
	r.Get("/projects/:key/issues/:issueKey/attachments", s.listAttachments)
	r.Get("/projects/:key/issues/:issueKey/attachments/:attachmentId/download", s.downloadAttachment)
	r.Delete("/projects/:key/issues/:issueKey/attachments/:attachmentId", s.deleteAttachment)
}
