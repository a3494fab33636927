package api

import (
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/version"
)

// issueErrors maps issues, versions and activity.
var issueErrors = []errorMapping{
	{issue.ErrNotFound, 404, "NOT_FOUND", "ISSUE_NOT_FOUND"},
	{issue.ErrAssigneeNotMember, 404, "NOT_FOUND", "ASSIGNEE_NOT_MEMBER"},
	{issue.ErrParentNotFound, 404, "NOT_FOUND", "PARENT_NOT_FOUND"},
	{issue.ErrSubtaskNeedsParent, 400, "BAD_REQUEST", "SUBTASK_NEEDS_PARENT"},
	{issue.ErrSprintNotFound, 404, "NOT_FOUND", "SPRINT_NOT_FOUND"},
	{issue.ErrSprintNotInProject, 403, "FORBIDDEN", "SPRINT_NOT_IN_PROJECT"},
	{issue.ErrSprintClosed, 409, "CONFLICT", "SPRINT_STATE"},
	{version.ErrNotFound, 404, "NOT_FOUND", "VERSION_NOT_FOUND"},
	{version.ErrDuplicateName, 409, "CONFLICT", "DUPLICATE_NAME"},
}
