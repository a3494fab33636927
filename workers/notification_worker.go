package workers

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/notify"
	"github.com/taskweave/taskweave/jobs"
)

// addNotificationWorkers registers the notification and e-mail workers.
//
// The notification worker writes its rows with bun (database/sql) and must insert the
// e-mail jobs on that same transaction; the working client is riverpgxv5 and takes only
// a pgx.Tx, so the worker holds an insert-only client on database/sql, exactly like the
// API's event bus.
func addNotificationWorkers(ws *river.Workers, cfg Config, d Deps) []*river.PeriodicJob {
	inserter, err := river.NewClient(riverdatabasesql.New(d.DB.SQL), &river.Config{FetchCooldown: jobs.InsertNotifyCooldown})
	if err != nil {
		// Only an invalid River configuration fails here, and this one is constant: a
		// programming error, reported the way river.AddWorker reports its own.
		panic(fmt.Sprintf("notification inserter: %v", err))
	}
	bus := event.NewBus(inserter)
	river.AddWorker(ws, &NotifyEventWorker{Dispatcher: &notify.Dispatcher{
		DB: d.DB.Bun, Enqueue: bus.Enqueue, Mail: cfg.Mail.Addr != "",
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
