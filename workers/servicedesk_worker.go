package workers

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/notify"
	"github.com/taskweave/taskweave/domain/servicedesk"
	"github.com/taskweave/taskweave/jobs"
)

// ServiceDeskConfig is the service desk's part of the worker configuration.
type ServiceDeskConfig struct {
	// SLAInterval is the breach monitor's period (TW_SLA_INTERVAL); zero is 60 s.
	SLAInterval time.Duration
	// Now is the breach monitor's clock; nil is time.Now (tests move it).
	Now func() time.Time
	// Mail is the e-mail ingestion (TW_MAIL_INGEST_ENABLED, TW_IMAP_*, TW_MAIL_INTERVAL).
	Mail servicedesk.MailboxConfig
}

// DefaultMailInterval is the mailbox poll period when TW_MAIL_INTERVAL is unset.
const DefaultMailInterval = time.Minute

// DefaultMaxAttachmentBytes is the e-mail attachment limit when none is configured: the
// default of TW_MAX_UPLOAD_BYTES.
const DefaultMaxAttachmentBytes = 25 << 20

// DefaultSLAInterval is the breach monitor's period when TW_SLA_INTERVAL is unset.
const DefaultSLAInterval = time.Minute

// addServiceDeskWorkers registers the SLA breach monitor, the mailbox poll and the
// ticket acknowledgement, and returns the periodic jobs: the scan always, the poll when
// e-mail ingestion is on.
//
// River enqueues periodic jobs only on the elected leader among the worker processes
// sharing the database, so N workers scan (and poll) once per period, not N times.
// Leadership can move (a leader dies, a new one is elected and enqueues on its own
// schedule), so that alone would not keep a breach from being reported twice:
// sla_reports' unique key does, whoever scans and however often; for e-mail,
// mail_messages' key does the same.
func addServiceDeskWorkers(ws *river.Workers, cfg Config, d Deps) []*river.PeriodicJob {
	m := servicedesk.NewMetrics(d.Registry)
	sd := cfg.ServiceDesk
	river.AddWorker(ws, &SLAScanWorker{Monitor: servicedesk.NewMonitor(d.DB, d.Bus, m, sd.Now), Log: d.Log})
	// The poll worker is registered even with ingestion off, so a poll queued before it
	// was switched off completes (doing nothing) instead of waiting for a worker.
	desk := servicedesk.NewService(d.DB, d.Bus, audit.NewRecorder(d.Bus)).WithMailbox(sd.Mail.OwnAddresses)
	if d.Attachments != nil {
		// E-mail attachments become ticket attachments, under the upload limit.
		limit := sd.Mail.MaxAttachmentBytes
		if limit <= 0 {
			limit = DefaultMaxAttachmentBytes
		}
		desk = desk.WithAttachments(attachment.NewService(d.DB, d.Bus, d.Attachments, d.Log), limit)
	}
	var poller *servicedesk.Poller
	if sd.Mail.Enabled {
		poller = servicedesk.NewPoller(desk, sd.Mail, m, d.Log, cfg.Mail.Addr != "")
	}
	river.AddWorker(ws, &MailPollWorker{Poller: poller})
	mailer := notify.NewMailer(d.DB.Bun, cfg.Mail.Addr, cfg.Mail.From, cfg.BaseURL)
	river.AddWorker(ws, &TicketAckWorker{Desk: desk, Mailer: mailer})
	river.AddWorker(ws, &DeskAddressVerificationWorker{Desk: desk, Mailer: mailer})

	interval := sd.SLAInterval
	if interval <= 0 {
		interval = DefaultSLAInterval
	}
	scheduled := []*river.PeriodicJob{periodic("sla_scan", interval, true, jobs.SLAScan{})}
	if poller != nil {
		every := sd.Mail.Interval
		if every <= 0 {
			every = DefaultMailInterval
		}
		scheduled = append(scheduled, periodic("mail_poll", every, true, jobs.MailPoll{}))
	}
	return scheduled
}

// SLAScanWorker runs one breach monitor scan.
type SLAScanWorker struct {
	river.WorkerDefaults[jobs.SLAScan]
	Monitor *servicedesk.Monitor
	Log     *slog.Logger
}

// Work implements river.Worker. A failed scan is not retried (MaxAttempts 1): the next
// period scans again and reports whatever this one did not.
func (w *SLAScanWorker) Work(ctx context.Context, _ *river.Job[jobs.SLAScan]) error {
	res, err := w.Monitor.Scan(ctx)
	if err != nil {
		return err
	}
	if res != (servicedesk.ScanResult{}) && w.Log != nil {
		w.Log.InfoContext(ctx, "sla scan reported", "resolution_breaches", res.Resolution, "response_breaches", res.Response,
			"escalations", res.Escalations, "assigned", res.Assigned)
	}
	return nil
}

// MailPollWorker polls the desk mailbox once (servicedesk.Poller). With ingestion off
// (nil Poller) it does nothing.
type MailPollWorker struct {
	river.WorkerDefaults[jobs.MailPoll]
	Poller *servicedesk.Poller
}

// Work implements river.Worker. A failed poll is not retried (MaxAttempts 1): the next
// period polls again, and nothing of a failed poll is lost (an unhandled message stays
// unseen).
func (w *MailPollWorker) Work(ctx context.Context, _ *river.Job[jobs.MailPoll]) error {
	if w.Poller == nil {
		return nil
	}
	_, err := w.Poller.Poll(ctx)
	return err
}

// Timeout gives a poll of a slow mailbox longer than the default job timeout.
func (w *MailPollWorker) Timeout(*river.Job[jobs.MailPoll]) time.Duration { return 5 * time.Minute }

// TicketAckWorker sends a ticket's acknowledgement to its sender, naming the key. As
// with notification e-mails, a refusal of the relay, or no relay configured any more,
// cancels the job instead of retrying it for hours.
type TicketAckWorker struct {
	river.WorkerDefaults[jobs.TicketAck]
	Desk   *servicedesk.Service
	Mailer *notify.Mailer
}

// Timeout implements river.Worker: an acknowledgement is one SMTP conversation.
func (w *TicketAckWorker) Timeout(*river.Job[jobs.TicketAck]) time.Duration { return mailJobTimeout }

// Work implements river.Worker.
func (w *TicketAckWorker) Work(ctx context.Context, job *river.Job[jobs.TicketAck]) error {
	ack, err := w.Desk.Acknowledgement(ctx, job.Args.IssueID)
	if err != nil || ack == nil {
		return err
	}
	return mailOutcome(w.Mailer.SendTo(ctx, job.Args.IssueID, ack.To, ack.Subject, ack.Text, servicedesk.AckType))
}

// DeskAddressVerificationWorker mails the code that proves a desk's pending address.
// A job whose code is stale (replaced, used, the address changed or proven elsewhere)
// sends nothing; a refusal of the relay, or no relay, cancels it as for notifications.
type DeskAddressVerificationWorker struct {
	river.WorkerDefaults[jobs.DeskAddressVerification]
	Desk   *servicedesk.Service
	Mailer *notify.Mailer
}

// Timeout implements river.Worker: the mail is one SMTP conversation.
func (w *DeskAddressVerificationWorker) Timeout(*river.Job[jobs.DeskAddressVerification]) time.Duration {
	return mailJobTimeout
}

// Work implements river.Worker.
func (w *DeskAddressVerificationWorker) Work(ctx context.Context, job *river.Job[jobs.DeskAddressVerification]) error {
	m, err := w.Desk.VerificationMail(ctx, job.Args)
	if err != nil || m == nil {
		return err
	}
	return mailOutcome(w.Mailer.SendTo(ctx, job.Args.ID, m.To, m.Subject, m.Text, servicedesk.VerificationType))
}
