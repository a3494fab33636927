package api

import (
	"github.com/taskweave/taskweave/domain/label"
	"github.com/taskweave/taskweave/domain/organization"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/user"
)

// projectErrors maps projects, members, organizations, labels and API keys.
var projectErrors = []errorMapping{
	{project.ErrNotFound, 404, "NOT_FOUND", ""},
	{project.ErrForbidden, 403, "FORBIDDEN", ""},
	{project.ErrDuplicateKey, 409, "CONFLICT", "DUPLICATE_KEY"},
	{project.ErrAlreadyMember, 409, "CONFLICT", "ALREADY_MEMBER"},
	{project.ErrUserNotFound, 404, "NOT_FOUND", "USER_NOT_FOUND"},
	{project.ErrMemberNotFound, 404, "NOT_FOUND", "MEMBER_NOT_FOUND"},
	{project.ErrOwnRole, 403, "FORBIDDEN", "OWN_ROLE"},
	{project.ErrOwnerProtected, 403, "FORBIDDEN", "PROJECT_OWNER"},
	{project.ErrAPIKeyNotFound, 404, "NOT_FOUND", "API_KEY_NOT_FOUND"},

	{organization.ErrNotFound, 404, "NOT_FOUND", "ORGANIZATION_NOT_FOUND"},
	{organization.ErrDuplicateSlug, 409, "CONFLICT", "DUPLICATE_SLUG"},
	{organization.ErrNotMember, 403, "FORBIDDEN", "NOT_AN_ORG_MEMBER"},
	{organization.ErrAdminOnly, 403, "FORBIDDEN", "ORG_ADMIN_ONLY"},
	{organization.ErrAlreadyMember, 409, "CONFLICT", "ALREADY_MEMBER"},
	{organization.ErrMemberNotFound, 404, "NOT_FOUND", "MEMBER_NOT_FOUND"},
	{organization.ErrUserNotFound, 404, "NOT_FOUND", "USER_NOT_FOUND"},
	{organization.ErrOwnRole, 403, "FORBIDDEN", "OWN_ROLE"},
	{organization.ErrOwnerRule, 403, "FORBIDDEN", "OWNER_RULE"},
	{organization.ErrLastOwner, 403, "FORBIDDEN", "LAST_OWNER"},

	{label.ErrNotFound, 404, "NOT_FOUND", "LABEL_NOT_FOUND"},
	{label.ErrDuplicateName, 409, "CONFLICT", "DUPLICATE_NAME"},

	{user.ErrSearchForbidden, 403, "FORBIDDEN", "USER_SEARCH_FORBIDDEN"},
}
