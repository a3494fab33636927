package api

import (
	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/label"
	"github.com/taskweave/taskweave/domain/organization"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/user"
)

// projectErrors maps projects, members, organizations, labels and API keys.
var projectErrors = []core.ErrorMapping{
	{Err: project.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: ""},
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

	{Err: user.ErrSearchForbidden, Status: 403, Code: "FORBIDDEN", Reason: "USER_SEARCH_FORBIDDEN"},
}
