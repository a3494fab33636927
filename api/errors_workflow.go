package api

import (
	"errors"
	"github.com/taskweave/taskweave/api/core"

	"github.com/taskweave/taskweave/domain/workflow"
)

// workflowErrors maps the workflow rules.
var workflowErrors = []core.ErrorMapping{
	{Err: workflow.ErrTransitionNotAllowed, Status: 400, Code: "BAD_REQUEST", Reason: "TRANSITION_NOT_ALLOWED"},
	{Err: workflow.ErrStatusNotInWorkflow, Status: 403, Code: "FORBIDDEN", Reason: "STATUS_NOT_IN_WORKFLOW"},
	{Err: workflow.ErrNoDefaultStatus, Status: 404, Code: "NOT_FOUND", Reason: "NO_DEFAULT_STATUS"},
	{Err: workflow.ErrWorkflowNotFound, Status: 404, Code: "NOT_FOUND", Reason: "WORKFLOW_NOT_FOUND"},
	{Err: workflow.ErrStatusNotFound, Status: 404, Code: "NOT_FOUND", Reason: "STATUS_NOT_FOUND"},
	{Err: workflow.ErrTransitionNotFound, Status: 404, Code: "NOT_FOUND", Reason: "TRANSITION_NOT_FOUND"},
	{Err: workflow.ErrStatusInUse, Status: 409, Code: "CONFLICT", Reason: "IN_USE"},
}

// guardError renders a refused guard as 400 GUARD_FAILED naming the field or the role.
func guardError(err error) *core.Error {
	var g *workflow.GuardError
	if !errors.As(err, &g) {
		return nil
	}
	e := core.BadRequest("GUARD_FAILED")
	if g.Field != "" {
		e.Key, e.Args = "reason.GUARD_FIELD", []string{"field", g.Field}
	} else {
		e.Key, e.Args = "reason.GUARD_ROLE", []string{"role", g.Role}
	}
	return e
}
