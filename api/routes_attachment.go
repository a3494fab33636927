package api

import "github.com/gofiber/fiber/v2"

// attachmentRoutes registers the attachment endpoints under /projects/:key/issues/:issueKey.
// The upload's body is streamed: core.BodyGuard recognizes its path (uploadPath) and leaves
// the body unread for it, so keep the two in step.
func (s *Server) attachmentRoutes(r fiber.Router) {
	r.Post("/projects/:key/issues/:issueKey/attachments", s.uploadAttachment)
	r.Get("/projects/:key/issues/:issueKey/attachments", s.listAttachments)
	r.Get("/projects/:key/issues/:issueKey/attachments/:attachmentId/download", s.downloadAttachment)
	r.Delete("/projects/:key/issues/:issueKey/attachments/:attachmentId", s.deleteAttachment)
}
