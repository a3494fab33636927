package work

import (
	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/version"
)

// issueErrors maps issues, versions and activity.
var issueErrors = []core.ErrorMapping{
	{Err: issue.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "ISSUE_NOT_FOUND"},
	{Err: issue.ErrAssigneeNotMember, Status: 404, Code: "NOT_FOUND", Reason: "ASSIGNEE_NOT_MEMBER"},
	{Err: issue.ErrParentNotFound, Status: 404, Code: "NOT_FOUND", Reason: "PARENT_NOT_FOUND"},
	{Err: issue.ErrSubtaskNeedsParent, Status: 400, Code: "BAD_REQUEST", Reason: "SUBTASK_NEEDS_PARENT"},
	{Err: issue.ErrSprintNotFound, Status: 404, Code: "NOT_FOUND", Reason: "SPRINT_NOT_FOUND"},
	{Err: issue.ErrSprintNotInProject, Status: 403, Code: "FORBIDDEN", Reason: "SPRINT_NOT_IN_PROJECT"},
	{Err: issue.ErrSprintClosed, Status: 409, Code: "CONFLICT", Reason: "SPRINT_STATE"},
	{Err: version.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "VERSION_NOT_FOUND"},
	{Err: version.ErrDuplicateName, Status: 409, Code: "CONFLICT", Reason: "DUPLICATE_NAME"},
}
