package api

import (
	"github.com/taskweave/taskweave/domain/sprint"
)

// sprintErrors maps the sprint sentinels to docs/api-conventions.md#errors.
// sprint.ErrDateOrder is not here: the handlers turn it into a VALIDATION_ERROR naming
// endDate.
var sprintErrors = []errorMapping{
	{sprint.ErrNotFound, 404, "NOT_FOUND", "SPRINT_NOT_FOUND"},
	{sprint.ErrNotInProject, 403, "FORBIDDEN", "SPRINT_NOT_IN_PROJECT"},
	{sprint.ErrAlreadyActive, 409, "CONFLICT", "SPRINT_ALREADY_ACTIVE"},
	{sprint.ErrState, 409, "CONFLICT", "SPRINT_STATE"},
	{sprint.ErrIssueNotInSprint, 409, "CONFLICT", "ISSUE_NOT_IN_SPRINT"},
}
