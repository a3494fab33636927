package api

import "github.com/taskweave/taskweave/domain/project"

// projectErrors maps projects, members, organizations, labels and API keys.
var projectErrors = []errorMapping{
	{project.ErrNotFound, 404, "NOT_FOUND", ""},
	{project.ErrForbidden, 403, "FORBIDDEN", ""},
}
