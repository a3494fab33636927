package workers

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/taskweave/taskweave/domain/notify"
	"github.com/taskweave/taskweave/jobs"
)

// MailSendWorker sends one notification e-mail per job. A failed attempt returns its
// error and River retries with its backoff (MaxAttempts 10); a permanent failure (an
// SMTP 5xx, or no relay configured any more) cancels the job, since sending again would
// fail again.
type MailSendWorker struct {
	river.WorkerDefaults[jobs.MailSend]
	Mailer *notify.Mailer
}

// Work implements river.Worker.
func (w *MailSendWorker) Work(ctx context.Context, job *river.Job[jobs.MailSend]) error {
	return mailOutcome(w.Mailer.Send(ctx, job.Args))
}

// mailOutcome is a mail job's result from its send's: a permanent failure (an SMTP 5xx,
// no relay configured) cancels the job, since sending again would fail again; any
// other error is retried.
func mailOutcome(err error) error {
	if notify.Permanent(err) {
		return river.JobCancel(err)
	}
	return err
}

// mailJobTimeout leaves one SMTP conversation its own limit plus the statements around it.
const mailJobTimeout = notify.MailerTimeout + 15*time.Second

// Timeout implements river.Worker.
func (w *MailSendWorker) Timeout(*river.Job[jobs.MailSend]) time.Duration { return mailJobTimeout }
