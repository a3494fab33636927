package api

import "github.com/taskweave/taskweave/domain/queue"

// jobErrors maps the job and queue sentinels to the error format.
var jobErrors = []errorMapping{
	{queue.ErrJobNotFound, 404, "NOT_FOUND", "JOB_NOT_FOUND"},
	{queue.ErrJobRunning, 409, "CONFLICT", "JOB_RUNNING"},
	{queue.ErrQueueNotFound, 404, "NOT_FOUND", "QUEUE_NOT_FOUND"},
}
