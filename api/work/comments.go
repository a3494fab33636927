package work

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/project"
)

// commentPageSize is GET …/comments' default page size (docs/api-conventions.md#pages).
const commentPageSize = 5

// commentResponse is Comment in api/openapi/85-comments.yaml; authorName and updatedAt
// are Taskweave additions. A deleted comment (never listed today) would show deleted
// true, body null.
type commentResponse struct {
	ID         uuid.UUID  `json:"id"`
	IssueID    uuid.UUID  `json:"issueId"`
	AuthorID   *uuid.UUID `json:"authorId"`
	AuthorName *string    `json:"authorName"`
	Body       *string    `json:"body"`
	EditedAt   *string    `json:"editedAt"`
	Deleted    bool       `json:"deleted"`
	CreatedAt  string     `json:"createdAt"`
	UpdatedAt  string     `json:"updatedAt"`
	// Automated marks a comment an automation rule wrote (RuleID); its author is
	// the built-in automation user.
	Automated bool       `json:"automated"`
	RuleID    *uuid.UUID `json:"ruleId"`
}

func toCommentResponse(v *comment.View) commentResponse {
	r := commentResponse{ID: v.ID, IssueID: v.IssueID, AuthorID: v.AuthorID, AuthorName: v.AuthorName,
		EditedAt: core.InstantPtr(v.EditedAt), Deleted: v.DeletedAt != nil, CreatedAt: core.Instant(v.CreatedAt),
		UpdatedAt: core.Instant(v.UpdatedAt), Automated: v.RuleID != nil, RuleID: v.RuleID}
	if !r.Deleted {
		body := v.Body
		r.Body = &body
	}
	return r
}

// commentRequest is the body of POST and PUT …/comments.
type commentRequest struct {
	Body *string `json:"body"`
}

// parseComment decodes `{body}`: absent or null is BAD_REQUEST, blank or longer than
// comment.MaxBody characters a VALIDATION_ERROR naming body.
func parseComment(raw core.Body) (string, error) {
	var r commentRequest
	if err := raw.Decode(&r); err != nil {
		return "", err
	}
	if r.Body == nil {
		return "", core.Required("body")
	}
	var f core.Fields
	f.Text("body", *r.Body, true, comment.MaxBody)
	return *r.Body, f.Err()
}

// comments is the comment service over the server's database, bus and audit recorder.
func (s *handlers) comments() *comment.Service { return comment.NewService(s.DB, s.Bus, s.Audit) }

func (s *handlers) listComments(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	pr, err := core.ParsePage(c, commentPageSize)
	if err != nil {
		return err
	}
	after, err := pr.AfterTimeID("comments")
	if err != nil {
		return err
	}
	views, total, err := s.comments().List(c.UserContext(), issueProject(a), ref, after, pr.Offset(), pr.Limit())
	if err != nil {
		return err
	}
	next := pr.Next(c, "comments", len(views), total, func(i int) []string { return core.TimeIDKeys(views[i].CreatedAt, views[i].ID) })
	views = core.Trim(views, pr)
	content := make([]commentResponse, len(views))
	for i := range views {
		content[i] = toCommentResponse(&views[i])
	}
	return c.JSON(core.NewPage(content, pr, total, next))
}

func (s *handlers) createComment(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Member)
	if err != nil {
		return err
	}
	body, err := parseComment(core.BodyOf(c))
	if err != nil {
		return err
	}
	actor := issueActor(c, a)
	v, err := s.comments().Create(c.UserContext(), issueProject(a), &actor, ref, body)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toCommentResponse(v))
}

// editComment: the author only, and only while they may write (a VIEWER author is
// refused by the role check first).
func (s *handlers) editComment(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Member)
	if err != nil {
		return err
	}
	id, err := core.PathUUID(c, "commentId")
	if err != nil {
		return err
	}
	body, err := parseComment(core.BodyOf(c))
	if err != nil {
		return err
	}
	v, err := s.comments().Edit(c.UserContext(), issueProject(a), issueActor(c, a), ref, id, body)
	if err != nil {
		return err
	}
	return c.JSON(toCommentResponse(v))
}

// deleteComment: the author (with WRITE) or a project admin (project role ADMIN, the
// owner, or ADMIN inherited from the organization).
func (s *handlers) deleteComment(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Member)
	if err != nil {
		return err
	}
	id, err := core.PathUUID(c, "commentId")
	if err != nil {
		return err
	}
	admin := a.Role.AtLeast(project.Admin)
	if err := s.comments().Delete(c.UserContext(), issueProject(a), issueActor(c, a), admin, ref, id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
