package project

import (
	"errors"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/label"
	"github.com/taskweave/taskweave/domain/organization"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/workflow"
)

// Errors maps projects, members, organizations, labels, API keys and the workflow rules
// to docs/api-conventions.md#errors; a refused guard is guardError's.
var Errors = core.ErrorTable{Mappers: []core.Mapper{guardError}, Mappings: []core.ErrorMapping{
	{Err: project.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "PROJECT_NOT_FOUND"},
	{Err: project.ErrForbidden, Status: 403, Code: "FORBIDDEN", Reason: ""},
	{Err: project.ErrDuplicateKey, Status: 409, Code: "CONFLICT", Reason: "DUPLICATE_KEY"},
	{Err: project.ErrAlreadyMember, Status: 409, Code: "CONFLICT", Reason: "ALREADY_MEMBER"},
	{Err: project.ErrUserNotFound, Status: 404, Code: "NOT_FOUND", Reason: "USER_NOT_FOUND"},
	{Err: project.ErrMemberNotFound, Status: 404, Code: "NOT_FOUND", Reason: "MEMBER_NOT_FOUND"},
	{Err: project.ErrOwnRole, Status: 403, Code: "FORBIDDEN", Reason: "OWN_ROLE"},
	{Err: project.ErrOwnerProtected, Status: 403, Code: "FORBIDDEN", Reason: "PROJECT_OWNER"},
	{Err: project.ErrAPIKeyNotFound, Status: 404, Code: "NOT_FOUND", Reason: "API_KEY_NOT_FOUND"},

	{Err: organization.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "ORGANIZATION_NOT_FOUND"},
	{Err: organization.ErrDuplicateSlug, Status: 409, Code: "CONFLICT", Reason: "DUPLICATE_SLUG"},
	{Err: organization.ErrNotMember, Status: 403, Code: "FORBIDDEN", Reason: "NOT_AN_ORG_MEMBER"},
	{Err: organization.ErrAdminOnly, Status: 403, Code: "FORBIDDEN", Reason: "ORG_ADMIN_ONLY"},
	{Err: organization.ErrAlreadyMember, Status: 409, Code: "CONFLICT", Reason: "ALREADY_MEMBER"},
	{Err: organization.ErrMemberNotFound, Status: 404, Code: "NOT_FOUND", Reason: "MEMBER_NOT_FOUND"},
	{Err: organization.ErrUserNotFound, Status: 404, Code: "NOT_FOUND", Reason: "USER_NOT_FOUND"},
	{Err: organization.ErrOwnRole, Status: 403, Code: "FORBIDDEN", Reason: "OWN_ROLE"},
	{Err: organization.ErrOwnerRule, Status: 403, Code: "FORBIDDEN", Reason: "OWNER_RULE"},
	{Err: organization.ErrLastOwner, Status: 403, Code: "FORBIDDEN", Reason: "LAST_OWNER"},

	{Err: label.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "LABEL_NOT_FOUND"},
	{Err: label.ErrDuplicateName, Status: 409, Code: "CONFLICT", Reason: "DUPLICATE_NAME"},

	{Err: workflow.ErrTransitionNotAllowed, Status: 400, Code: "BAD_REQUEST", Reason: "TRANSITION_NOT_ALLOWED"},
	{Err: workflow.ErrStatusNotInWorkflow, Status: 403, Code: "FORBIDDEN", Reason: "STATUS_NOT_IN_WORKFLOW"},
	{Err: workflow.ErrNoDefaultStatus, Status: 404, Code: "NOT_FOUND", Reason: "NO_DEFAULT_STATUS"},
	{Err: workflow.ErrWorkflowNotFound, Status: 404, Code: "NOT_FOUND", Reason: "WORKFLOW_NOT_FOUND"},
	{Err: workflow.ErrStatusNotFound, Status: 404, Code: "NOT_FOUND", Reason: "STATUS_NOT_FOUND"},
	{Err: workflow.ErrTransitionNotFound, Status: 404, Code: "NOT_FOUND", Reason: "TRANSITION_NOT_FOUND"},
	{Err: workflow.ErrStatusInUse, Status: 409, Code: "CONFLICT", Reason: "IN_USE"},
}}

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
