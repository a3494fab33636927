package work

import (
	"context"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/sprint"
	"github.com/taskweave/taskweave/store"
)

// sprintResponse is SprintResponse in api/openapi/70-sprints.yaml (createdAt is a
// Taskweave addition).
type sprintResponse struct {
	ID              uuid.UUID `json:"id"`
	Name            string    `json:"name"`
	Goal            *string   `json:"goal"`
	Status          string    `json:"status"`
	StartDate       *string   `json:"startDate"`
	EndDate         *string   `json:"endDate"`
	PlannedPoints   *int      `json:"plannedPoints"`
	CompletedPoints *int      `json:"completedPoints"`
	ProjectID       uuid.UUID `json:"projectId"`
	CreatedAt       string    `json:"createdAt"`
}

func toSprintResponse(sp *store.Sprint) sprintResponse {
	return sprintResponse{ID: sp.ID, Name: sp.Name, Goal: sp.Goal, Status: sp.Status, StartDate: sprintDate(sp.StartDate),
		EndDate: sprintDate(sp.EndDate), PlannedPoints: sp.PlannedPoints, CompletedPoints: sp.CompletedPoints,
		ProjectID: sp.ProjectID, CreatedAt: core.Instant(sp.CreatedAt)}
}

// sprintDate renders a plain date, null when empty.
func sprintDate(d *time.Time) *string {
	if d == nil {
		return nil
	}
	s := d.Format(time.DateOnly)
	return &s
}

// sprintCompleteResponse is the reply of POST …/complete.
type sprintCompleteResponse struct {
	Sprint              sprintResponse `json:"sprint"`
	MovedToBacklogCount int            `json:"movedToBacklogCount"`
}

// sprintRequest is the body of POST and PATCH …/sprints: absent or null members are
// unchanged on PATCH (a goal or date cannot be cleared; api/openapi/70-sprints.yaml).
type sprintRequest struct {
	Name      *string `json:"name"`
	Goal      *string `json:"goal"`
	StartDate *string `json:"startDate"`
	EndDate   *string `json:"endDate"`
}

// parseSprint decodes and validates a sprint body; on create name is required. Names
// are trimmed. A request's own pair of dates must not end before it starts.
func parseSprint(body core.Body, create bool) (sprint.Change, error) {
	var r sprintRequest
	if err := body.Decode(&r); err != nil {
		return sprint.Change{}, err
	}
	if create && r.Name == nil {
		return sprint.Change{}, core.Required("name")
	}
	var f core.Fields
	if r.Name != nil {
		f.Text("name", *r.Name, true, sprint.MaxName)
		name := strings.TrimSpace(*r.Name)
		r.Name = &name
	}
	out := sprint.Change{Name: r.Name, Goal: r.Goal, StartDate: issueDate(&f, "startDate", r.StartDate),
		EndDate: issueDate(&f, "endDate", r.EndDate)}
	if out.StartDate != nil && out.EndDate != nil && out.EndDate.Before(*out.StartDate) {
		f.Add("endDate", "DATE_ORDER", "field.SPRINT_DATE_ORDER")
	}
	return out, f.Err()
}

// sprints is the sprint service over the server's database and event bus.
func (s *handlers) sprints() *sprint.Service { return sprint.NewService(s.DB, s.Bus) }

func (s *handlers) listSprints(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	list, err := s.sprints().List(c.UserContext(), a.Project.ID)
	if err != nil {
		return err
	}
	out := make([]sprintResponse, len(list))
	for i := range list {
		out[i] = toSprintResponse(&list[i])
	}
	return c.JSON(out)
}

func (s *handlers) createSprint(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Member)
	if err != nil {
		return err
	}
	in, err := parseSprint(core.BodyOf(c), true)
	if err != nil {
		return err
	}
	sp, err := s.sprints().Create(c.UserContext(), a.Project.ID,
		sprint.NewSprint{Name: *in.Name, Goal: in.Goal, StartDate: in.StartDate, EndDate: in.EndDate})
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toSprintResponse(sp))
}

func (s *handlers) patchSprint(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Member, "sprintId")
	if err != nil {
		return err
	}
	in, err := parseSprint(core.BodyOf(c), false)
	if err != nil {
		return err
	}
	sp, err := s.sprints().Update(c.UserContext(), a.Project.ID, id, in)
	if err != nil {
		return err
	}
	return c.JSON(toSprintResponse(sp))
}

func (s *handlers) startSprint(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Member, "sprintId")
	if err != nil {
		return err
	}
	sp, err := s.sprints().Start(c.UserContext(), issueProject(a), issueActor(c, a), id)
	if err != nil {
		return err
	}
	return c.JSON(toSprintResponse(sp))
}

func (s *handlers) completeSprint(c *fiber.Ctx) error {
	a, id, err := s.ProjectItem(c, project.Member, "sprintId")
	if err != nil {
		return err
	}
	done, err := s.sprints().Complete(c.UserContext(), issueProject(a), issueActor(c, a), id)
	if err != nil {
		return err
	}
	return c.JSON(sprintCompleteResponse{Sprint: toSprintResponse(done.Sprint), MovedToBacklogCount: done.MovedToBacklogCount})
}

// sprintIssueRef reads the :issueId path segment, an issue UUID or key (ABC-12).
func sprintIssueRef(c *fiber.Ctx) (issue.Ref, error) {
	ref, ok := issue.ParseRef(c.Params("issueId"))
	if !ok {
		return ref, core.BadRequest("INVALID_ISSUE_REF")
	}
	return ref, nil
}

func (s *handlers) addSprintIssue(c *fiber.Ctx) error {
	return s.sprintIssue(c, (*sprint.Service).AddIssue)
}

func (s *handlers) removeSprintIssue(c *fiber.Ctx) error {
	return s.sprintIssue(c, (*sprint.Service).RemoveIssue)
}

// sprintIssue runs one of the sprint membership changes and answers 204.
func (s *handlers) sprintIssue(c *fiber.Ctx, change func(*sprint.Service, context.Context, issue.Project, issue.Actor, uuid.UUID, issue.Ref) error) error {
	a, id, err := s.ProjectItem(c, project.Member, "sprintId")
	if err != nil {
		return err
	}
	ref, err := sprintIssueRef(c)
	if err != nil {
		return err
	}
	if err := change(s.sprints(), c.UserContext(), issueProject(a), issueActor(c, a), id, ref); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
