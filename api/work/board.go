package work

import (
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/board"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
)

// boardResponse is BoardResponse in api/openapi/70-sprints.yaml.
type boardResponse struct {
	Sprint  boardSprintResponse   `json:"sprint"`
	Columns []boardColumnResponse `json:"columns"`
}

// boardSprintResponse is the board's sprint summary.
type boardSprintResponse struct {
	ID              uuid.UUID `json:"id"`
	Name            string    `json:"name"`
	Goal            *string   `json:"goal"`
	StartDate       *string   `json:"startDate"`
	EndDate         *string   `json:"endDate"`
	DaysRemaining   *int      `json:"daysRemaining"`
	TotalPoints     *int      `json:"totalPoints"`
	CompletedPoints int       `json:"completedPoints"`
}

// boardColumnResponse is one status with its issues.
type boardColumnResponse struct {
	Status boardStatusResponse  `json:"status"`
	Issues []core.IssueResponse `json:"issues"`
}

// boardStatusResponse is a column's status: {id, name, category, color}.
type boardStatusResponse struct {
	ID       uuid.UUID `json:"id"`
	Name     string    `json:"name"`
	Category string    `json:"category"`
	Color    string    `json:"color"`
}

func toBoardResponse(b *board.Board) boardResponse {
	s := b.Sprint
	out := boardResponse{
		Sprint: boardSprintResponse{ID: s.ID, Name: s.Name, Goal: s.Goal, StartDate: sprintDate(s.StartDate),
			EndDate: sprintDate(s.EndDate), DaysRemaining: s.DaysRemaining, TotalPoints: s.TotalPoints,
			CompletedPoints: s.CompletedPoints},
		Columns: make([]boardColumnResponse, len(b.Columns)),
	}
	n := 0
	for _, c := range b.Columns {
		n += len(c.Issues)
	}
	// One allocation for every issue of the board rather than one per column.
	all := make([]core.IssueResponse, 0, n)
	for i, c := range b.Columns {
		start := len(all)
		for _, v := range c.Issues {
			all = append(all, core.ToIssueResponse(v))
		}
		out.Columns[i] = boardColumnResponse{
			Status: boardStatusResponse{ID: c.Status.ID, Name: c.Status.Name, Category: c.Status.Category, Color: c.Status.Color},
			Issues: all[start:len(all):len(all)],
		}
	}
	return out
}

// sprintToday is the current date in UTC, the calendar sprint dates are in.
func sprintToday() time.Time {
	y, m, d := time.Now().UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// getBoard serves the active sprint's board. The board's head is read in the access
// statement (board.HeadRead), with the access token's user row (deferredAuth), and an
// unchanged board is served from the cache with its ETag: an unchanged board, or a
// poll of it answered 304, costs that one statement (docs/performance.md).
func (s *handlers) getBoard(c *fiber.Ctx) error {
	read := board.NewHeadRead()
	a, err := s.ProjectAccessWith(c, project.Viewer, &read.Extra)
	if err != nil {
		return err
	}
	p := issueProject(a)
	head, auditAll, err := read.Head(c.UserContext(), s.DB.Pool, p, sprintToday())
	if err != nil && !errors.Is(err, board.ErrNoActiveSprint) {
		return err
	}
	if auditAll {
		if err := s.boardOpened(c, a, head); err != nil {
			return err
		}
	}
	if head == nil {
		return c.SendStatus(fiber.StatusNoContent)
	}
	ctx := c.UserContext()
	body, etag, err := s.boards.body(a.Project.ID, head, func() (*board.Board, error) { return head.Load(ctx, s.DB.Pool, p) })
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	// The conditional middleware answers If-None-Match with this tag rather than hashing
	// the body again.
	c.Set(fiber.HeaderETag, etag)
	// The cached slice is never changed, so the response may point at it.
	c.Response().SetBodyRaw(body)
	return nil
}

// boardOpened records BOARD_OPENED (ALL level; Load already read the toggle, so a
// board read with the level off costs no extra query).
func (s *handlers) boardOpened(c *fiber.Ctx, a *project.Access, b *board.Head) error {
	details := map[string]any{"projectKey": a.Project.Key, "sprintId": nil}
	if b != nil {
		details["sprintId"] = b.Sprint.ID
	}
	e, err := core.ReadEntry(core.AuditActor(c), audit.BoardOpened, "PROJECT", a.Project.ID.String(), a.Project.ID, details)
	if err != nil {
		return err
	}
	return s.RecordInTx(c.UserContext(), e, nil)
}

// boardMoveRequest is PATCH …/board/move.
type boardMoveRequest struct {
	IssueID     *string `json:"issueId"`
	NewStatusID *string `json:"newStatusId"`
}

// moveOnBoard is exactly an issue PATCH that sets only statusId: the same domain call,
// so workflow validation, SLA timer, activity and events are the same.
func (s *handlers) moveOnBoard(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Member)
	if err != nil {
		return err
	}
	var r boardMoveRequest
	if err := core.Decode(c, &r); err != nil {
		return err
	}
	switch {
	case r.IssueID == nil:
		return core.Required("issueId")
	case r.NewStatusID == nil:
		return core.Required("newStatusId")
	}
	ref, ok := issue.ParseRef(*r.IssueID)
	if !ok {
		return core.BadRequest("INVALID_ISSUE_REF")
	}
	status, err := core.OptionalID("newStatusId", r.NewStatusID)
	if err != nil {
		return err
	}
	if _, err := s.issues().Update(c.UserContext(), issueProject(a), issueActor(c, a), ref, issue.Patch{StatusID: status}); err != nil {
		return err
	}
	// 200 with an empty body (SendStatus would write the status text).
	c.Status(fiber.StatusOK)
	return nil
}
