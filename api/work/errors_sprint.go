package work

import (
	"errors"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/board"
	"github.com/taskweave/taskweave/domain/sprint"
)

// sprintErrors maps the sprint sentinels to docs/api-conventions.md#errors;
// sprint.ErrDateOrder is sprintDateOrder's.
var sprintErrors = []core.ErrorMapping{
	{Err: sprint.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "SPRINT_NOT_FOUND"},
	{Err: sprint.ErrNotInProject, Status: 403, Code: "FORBIDDEN", Reason: "SPRINT_NOT_IN_PROJECT"},
	{Err: sprint.ErrAlreadyActive, Status: 409, Code: "CONFLICT", Reason: "SPRINT_ALREADY_ACTIVE"},
	{Err: sprint.ErrState, Status: 409, Code: "CONFLICT", Reason: "SPRINT_STATE"},
	{Err: sprint.ErrIssueNotInSprint, Status: 409, Code: "CONFLICT", Reason: "ISSUE_NOT_IN_SPRINT"},
	// The board answers an empty sprint section instead; anywhere else it is not found.
	{Err: board.ErrNoActiveSprint, Status: 404, Code: "NOT_FOUND", Reason: "NO_ACTIVE_SPRINT"},
}

// sprintDateOrder renders the domain's date order error (a PATCH date against the stored
// one) as the VALIDATION_ERROR naming endDate.
func sprintDateOrder(err error) *core.Error {
	if !errors.Is(err, sprint.ErrDateOrder) {
		return nil
	}
	var f core.Fields
	f.Add("endDate", "DATE_ORDER", "field.SPRINT_DATE_ORDER")
	return f.Err().(*core.Error)
}
