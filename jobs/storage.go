package jobs

import (
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// QueueStorage carries the move of attachment files from the disk to the bucket
// (StorageMigrate). Only a worker that has both TW_ATTACHMENTS_DIR and the bucket
// (TW_STORAGE=s3) serves it.
const QueueStorage = "storage"

// StorageMigrate moves every attachment file on the disk to the bucket
// (`taskweave storage migrate`). Its progress is the job's output while it runs.
type StorageMigrate struct{}

// Kind implements river.JobArgs.
func (StorageMigrate) Kind() string { return "storage.migrate" }

// InsertOpts: one move at a time; a finished one does not stop the next.
func (StorageMigrate) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueStorage, MaxAttempts: 10, UniqueOpts: river.UniqueOpts{
		ByQueue: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
			rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled},
	}}
}
