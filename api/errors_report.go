package api

import (
	"github.com/taskweave/taskweave/domain/dashboard"
	"github.com/taskweave/taskweave/domain/report"
)

// reportErrors maps the report and dashboard sentinels to docs/api-conventions.md#errors.
// A sprint of another project is 403 as everywhere for sprints
// (docs/api-conventions.md#roles, #reports).
var reportErrors = []errorMapping{
	{report.ErrSprintNotFound, 404, "NOT_FOUND", "SPRINT_NOT_FOUND"},
	{report.ErrSprintNotInProject, 403, "FORBIDDEN", "SPRINT_NOT_IN_PROJECT"},
	{dashboard.ErrWidgetNotFound, 404, "NOT_FOUND", "WIDGET_NOT_FOUND"},
}
