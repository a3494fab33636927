package work

import (
	"slices"

	"github.com/taskweave/taskweave/api/core"
)

// Errors maps the sentinels of issues and what hangs off them (errors_<resource>.go) to
// docs/api-conventions.md#errors.
var Errors = core.ErrorTable{
	Mappers:  []core.Mapper{sprintDateOrder, commentEmpty, attachmentTooLarge, customFieldValueError},
	Mappings: slices.Concat(issueErrors, sprintErrors, commentErrors, attachmentErrors, customFieldErrors, taskErrors),
}
