package api

import "github.com/taskweave/taskweave/domain/task"

// taskErrors maps the task sentinels to the error format.
var taskErrors = []errorMapping{
	{task.ErrNotFound, 404, "NOT_FOUND", "TASK_NOT_FOUND"},
	{task.ErrFinished, 409, "CONFLICT", "TASK_FINISHED"},
	{task.ErrNoResult, 404, "NOT_FOUND", "TASK_NO_RESULT"},
	{task.ErrNotUndoable, 409, "CONFLICT", "TASK_NOT_UNDOABLE"},
}
