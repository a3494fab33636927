package workers

import (
	"context"

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
	return nil
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
