package workers

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/taskweave/taskweave/domain/notify"
	"github.com/taskweave/taskweave/jobs"
)

// addNotificationWorkers registers the notification and e-mail workers.
//
// The notification worker writes its rows with bun (database/sql) and inserts the
// e-mail jobs on that same transaction through the process's event bus, whose
// insert-only client works on database/sql like the API's.
func addNotificationWorkers(ws *river.Workers, cfg Config, d Deps) []*river.PeriodicJob {
	river.AddWorker(ws, &NotifyEventWorker{Dispatcher: &notify.Dispatcher{
		DB: d.DB.Bun, Enqueue: d.Bus.Enqueue, Mail: cfg.Mail.Addr != "",
	}})
	river.AddWorker(ws, &MailSendWorker{Mailer: notify.NewMailer(d.DB.Bun, cfg.Mail.Addr, cfg.Mail.From, cfg.BaseURL)})
	river.AddWorker(ws, &DigestWorker{Digester: &notify.Digester{DB: d.DB.Bun, Enqueue: d.Bus.Enqueue, BaseURL: cfg.BaseURL,
		Now: cfg.Digest.Now}})
	every := cfg.Digest.Interval
	if every <= 0 {
		every = DefaultDigestInterval
	}
	// Digests are only gathered with SMTP configured (the dispatcher queues no e-mail
	// without it); the job runs anyway, so items left from before are not stranded.
	return []*river.PeriodicJob{periodic("notify_digest", every, true, jobs.NotifyDigest{})}
}

// DefaultDigestInterval is how often the digest job looks for due digests: a digest
// goes out within this long after its period ends.
const DefaultDigestInterval = 5 * time.Minute

// DigestWorker sends the due e-mail digests (notify.Digester). River enqueues it only
// on the elected leader; notification_digests' key keeps a period from being sent twice
// when leadership moves or two runs overlap.
type DigestWorker struct {
	river.WorkerDefaults[jobs.NotifyDigest]
	Digester *notify.Digester
}

// Work implements river.Worker. A failed run is not retried (MaxAttempts 1): the next
// one sends what this one did not.
func (w *DigestWorker) Work(ctx context.Context, _ *river.Job[jobs.NotifyDigest]) error {
	_, err := w.Digester.Run(ctx)
	return err
}

// NotifyEventWorker turns one domain event into notifications, live pushes and e-mail
// jobs, in one transaction.
type NotifyEventWorker struct {
	river.WorkerDefaults[jobs.NotifyEvent]
	Dispatcher *notify.Dispatcher
}

// Work implements river.Worker. The job id seeds the notification ids, so a retry of a
// job whose transaction committed creates nothing twice.
func (w *NotifyEventWorker) Work(ctx context.Context, job *river.Job[jobs.NotifyEvent]) error {
	return w.Dispatcher.Dispatch(ctx, job.ID, job.Args)
}
