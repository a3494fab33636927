package api

import (
	"errors"

	"github.com/taskweave/taskweave/domain/board"
	"github.com/taskweave/taskweave/domain/sprint"
)

// sprintErrors maps the sprint sentinels to docs/api-conventions.md#errors;
// sprint.ErrDateOrder is sprintDateOrder's.
var sprintErrors = []errorMapping{
	{sprint.ErrNotFound, 404, "NOT_FOUND", "SPRINT_NOT_FOUND"},
	{sprint.ErrNotInProject, 403, "FORBIDDEN", "SPRINT_NOT_IN_PROJECT"},
	{sprint.ErrAlreadyActive, 409, "CONFLICT", "SPRINT_ALREADY_ACTIVE"},
	{sprint.ErrState, 409, "CONFLICT", "SPRINT_STATE"},
	{sprint.ErrIssueNotInSprint, 409, "CONFLICT", "ISSUE_NOT_IN_SPRINT"},
	// The board answers an empty sprint section instead; anywhere else it is not found.
	{board.ErrNoActiveSprint, 404, "NOT_FOUND", "NO_ACTIVE_SPRINT"},
}

// sprintDateOrder renders the domain's date order error (a PATCH date against the stored
// one) as the VALIDATION_ERROR naming endDate.
func sprintDateOrder(err error) *Error {
	if !errors.Is(err, sprint.ErrDateOrder) {
		return nil
	}
	var f fields
	f.add("endDate", "DATE_ORDER", "field.SPRINT_DATE_ORDER")
	return f.err().(*Error)
}
