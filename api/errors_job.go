package api

import "github.com/taskweave/taskweave/domain/queue"

// jobErrors maps the job sentinels to CONTRACT §2.
var jobErrors = []errorMapping{
	{queue.ErrJobNotFound, 404, "NOT_FOUND", "JOB_NOT_FOUND"},
}
