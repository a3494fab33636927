package api

import (
	"errors"

	"github.com/taskweave/taskweave/domain/workflow"
)

// workflowErrors maps the workflow rules.
var workflowErrors = []errorMapping{
	{workflow.ErrTransitionNotAllowed, 400, "BAD_REQUEST", "TRANSITION_NOT_ALLOWED"},
	{workflow.ErrStatusNotInWorkflow, 403, "FORBIDDEN", "STATUS_NOT_IN_WORKFLOW"},
	{workflow.ErrNoDefaultStatus, 404, "NOT_FOUND", "NO_DEFAULT_STATUS"},
	{workflow.ErrWorkflowNotFound, 404, "NOT_FOUND", "WORKFLOW_NOT_FOUND"},
	{workflow.ErrStatusNotFound, 404, "NOT_FOUND", "STATUS_NOT_FOUND"},
	{workflow.ErrTransitionNotFound, 404, "NOT_FOUND", "TRANSITION_NOT_FOUND"},
	{workflow.ErrStatusInUse, 409, "CONFLICT", "IN_USE"},
}

// guardError renders a refused guard as 400 GUARD_FAILED naming the field or the role.
func guardError(err error) *Error {
	var g *workflow.GuardError
	if !errors.As(err, &g) {
		return nil
	}
	e := badRequest("GUARD_FAILED")
	if g.Field != "" {
		e.Key, e.Args = "reason.GUARD_FIELD", []string{"field", g.Field}
	} else {
		e.Key, e.Args = "reason.GUARD_ROLE", []string{"role", g.Role}
	}
	return e
}
