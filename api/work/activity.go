package work

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/project"
)

// activityPageSize is GET …/activity's default page size (docs/api-conventions.md#pages).
const activityPageSize = 50

// activityResponse is Activity in api/openapi/85-comments.yaml; actorName is a Taskweave
// addition. The values are display strings (status names, assignee names, file names, a
// comment's opening words).
type activityResponse struct {
	ID        uuid.UUID  `json:"id"`
	IssueID   uuid.UUID  `json:"issueId"`
	ActorID   uuid.UUID  `json:"actorId"`
	ActorName string     `json:"actorName"`
	Type      string     `json:"type"`
	CommentID *uuid.UUID `json:"commentId"`
	OldValue  *string    `json:"oldValue"`
	NewValue  *string    `json:"newValue"`
	CreatedAt string     `json:"createdAt"`
	// Automated marks a change an automation rule made (its actor is the built-in
	// automation user); ruleId, ruleName and ruleCreatorId name the rule and its creator.
	Automated     bool       `json:"automated"`
	RuleID        *uuid.UUID `json:"ruleId"`
	RuleName      *string    `json:"ruleName"`
	RuleCreatorID *uuid.UUID `json:"ruleCreatorId"`
}

func toActivityResponse(a *comment.Activity) activityResponse {
	return activityResponse{ID: a.ID, IssueID: a.IssueID, ActorID: a.ActorID, ActorName: a.ActorName, Type: a.Type,
		CommentID: a.CommentID, OldValue: a.OldValue, NewValue: a.NewValue, CreatedAt: core.Instant(a.CreatedAt),
		Automated: a.RuleID != nil, RuleID: a.RuleID, RuleName: a.RuleName, RuleCreatorID: a.RuleCreatorID}
}

func (s *handlers) listActivity(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	pr, err := core.ParsePage(c, activityPageSize)
	if err != nil {
		return err
	}
	after, err := pr.AfterTimeID("activity")
	if err != nil {
		return err
	}
	list, total, err := s.comments().Feed(c.UserContext(), issueProject(a), ref, after, pr.Offset(), pr.Limit())
	if err != nil {
		return err
	}
	next := pr.Next(c, "activity", len(list), total, func(i int) []string { return core.TimeIDKeys(list[i].CreatedAt, list[i].ID) })
	list = core.Trim(list, pr)
	content := make([]activityResponse, len(list))
	for i := range list {
		content[i] = toActivityResponse(&list[i])
	}
	return c.JSON(core.NewPage(content, pr, total, next))
}
