package jobs

import (
	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// SLAScan runs the SLA breach monitor once. It is a periodic job (TW_SLA_INTERVAL),
// enqueued only by the elected leader among the worker processes.
type SLAScan struct{}

// Kind implements river.JobArgs.
func (SLAScan) Kind() string { return "servicedesk.sla_scan" }

// InsertOpts: one attempt, since the next period scans again anyway, and unique while
// one waits or runs (not once it has completed), so a slow scan never piles up behind
// itself.
func (SLAScan) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueServiceDesk, MaxAttempts: 1, UniqueOpts: whileQueued}
}

// whileQueued makes a periodic job unique among the waiting and running ones.
var whileQueued = river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled,
}}

// MailPoll polls the service desk's IMAP mailbox once (TW_MAIL_INTERVAL), when e-mail
// ingestion is on; periodic like SLAScan.
type MailPoll struct{}

// Kind implements river.JobArgs.
func (MailPoll) Kind() string { return "servicedesk.mail_poll" }

// InsertOpts: as SLAScan's.
func (MailPoll) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueServiceDesk, MaxAttempts: 1, UniqueOpts: whileQueued}
}

// TicketAck sends the acknowledgement e-mail of a ticket that came by e-mail to its
// sender. It is inserted with the ticket, unique per ticket, so a retried poll never
// acknowledges twice; the worker reads the address and key from the ticket.
type TicketAck struct {
	IssueID uuid.UUID `json:"issueId" river:"unique"`
}

// Kind implements river.JobArgs.
func (TicketAck) Kind() string { return "servicedesk.ticket_ack" }

// InsertOpts sends it on the mail queue with the notification e-mails' retries.
func (TicketAck) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMail, MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// DeskAddressVerification sends the verification mail of a desk's pending e-mail
// address, inserted with the change that set the address or asked for a resend. The code
// travels in the job because only its hash is stored: the job is visible to system
// ADMINs only (who may approve the address anyway), and the code stops working when it
// expires, is replaced or is used. ID makes it unique, so a retried insert sends once.
type DeskAddressVerification struct {
	ID      uuid.UUID `json:"id" river:"unique"`
	DeskID  uuid.UUID `json:"deskId"`
	Address string    `json:"address"`
	Code    string    `json:"code"`
}

// Kind implements river.JobArgs.
func (DeskAddressVerification) Kind() string { return "servicedesk.address_verification" }

// InsertOpts sends it on the mail queue with the notification e-mails' retries.
func (DeskAddressVerification) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMail, MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}
