package workers

import (
	"time"

	"github.com/riverqueue/river"
)

// periodic is a job River enqueues with args every interval, under id (its unique name
// among the periodic jobs); runOnStart enqueues it once more when the client starts, for
// work that should not wait a whole interval after a deploy.
func periodic(id string, every time.Duration, runOnStart bool, args river.JobArgs) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(every), func() (river.JobArgs, *river.InsertOpts) {
		return args, nil
	}, &river.PeriodicJobOpts{ID: id, RunOnStart: runOnStart})
}
