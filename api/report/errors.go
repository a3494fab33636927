package report

import (
	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/dashboard"
	"github.com/taskweave/taskweave/domain/report"
)

// Errors maps the report and dashboard sentinels to docs/api-conventions.md#errors.
// A sprint of another project is 403 as everywhere for sprints
// (docs/api-conventions.md#roles, #reports).
var Errors = core.ErrorTable{Mappings: []core.ErrorMapping{
	{Err: report.ErrSprintNotFound, Status: 404, Code: "NOT_FOUND", Reason: "SPRINT_NOT_FOUND"},
	{Err: report.ErrSprintNotInProject, Status: 403, Code: "FORBIDDEN", Reason: "SPRINT_NOT_IN_PROJECT"},
	{Err: dashboard.ErrWidgetNotFound, Status: 404, Code: "NOT_FOUND", Reason: "WIDGET_NOT_FOUND"},
}}
