package admin

import (
	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/queue"
)

// Errors maps the job and queue sentinels to docs/api-conventions.md#errors (the audit
// endpoints have no sentinels of their own).
var Errors = core.ErrorTable{Mappings: []core.ErrorMapping{
	{Err: queue.ErrJobNotFound, Status: 404, Code: "NOT_FOUND", Reason: "JOB_NOT_FOUND"},
	{Err: queue.ErrJobRunning, Status: 409, Code: "CONFLICT", Reason: "JOB_RUNNING"},
	{Err: queue.ErrQueueNotFound, Status: 404, Code: "NOT_FOUND", Reason: "QUEUE_NOT_FOUND"},
}}
