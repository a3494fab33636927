package work

import (
	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/task"
)

// taskErrors maps the task sentinels to docs/api-conventions.md#errors.
var taskErrors = []core.ErrorMapping{
	{Err: task.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "TASK_NOT_FOUND"},
	{Err: task.ErrFinished, Status: 409, Code: "CONFLICT", Reason: "TASK_FINISHED"},
	{Err: task.ErrNoResult, Status: 404, Code: "NOT_FOUND", Reason: "TASK_NO_RESULT"},
	{Err: task.ErrNotUndoable, Status: 409, Code: "CONFLICT", Reason: "TASK_NOT_UNDOABLE"},
}
