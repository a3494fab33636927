package jobs

import (
	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// What a NotifyEvent is about (its Event member).
const (
	// NotifyAssigned: an issue was created with, or changed to, assignee AssigneeID.
	NotifyAssigned = "assigned"
	// NotifyStatusChanged: an issue moved from OldStatus to NewStatus.
	NotifyStatusChanged = "status_changed"
	// NotifyCommented: comment CommentID was added, mentioning Mentioned.
	NotifyCommented = "commented"
	// NotifyDirect: a notification of type Type for each of Recipients (the service
	// desk's SLA reports and incidents), rendered with Args.
	NotifyDirect = "direct"
)

// NotifyEvent is one domain event the notification worker turns into notifications
// (and e-mail jobs). It is inserted in the event's transaction, one per event; the
// worker resolves the recipients and their preferences when it runs.
type NotifyEvent struct {
	Event      string     `json:"event"`
	ProjectID  uuid.UUID  `json:"projectId"`
	ProjectKey string     `json:"projectKey"`
	IssueID    uuid.UUID  `json:"issueId"`
	IssueKey   string     `json:"issueKey"`
	IssueTitle string     `json:"issueTitle"`
	ActorID    *uuid.UUID `json:"actorId,omitempty"`
	AssigneeID *uuid.UUID `json:"assigneeId,omitempty"`
	OldStatus  string     `json:"oldStatus,omitempty"`
	NewStatus  string     `json:"newStatus,omitempty"`
	CommentID  *uuid.UUID `json:"commentId,omitempty"`
	// Excerpt is the start of the comment as plain text, not the whole body, so job rows
	// stay small.
	Excerpt   string      `json:"excerpt,omitempty"`
	Mentioned []uuid.UUID `json:"mentioned,omitempty"`
	// Type, Recipients and Args are NotifyDirect's: the notification type, who gets
	// it, and the values its text names besides the issue (severity, policy, minutes).
	Type       string            `json:"type,omitempty"`
	Recipients []uuid.UUID       `json:"recipients,omitempty"`
	Args       map[string]string `json:"args,omitempty"`
	// TaskID is the task (a bulk change) that made the change: its notifications of one
	// type to one user are folded into one, the first.
	TaskID *uuid.UUID `json:"taskId,omitempty"`
}

// Kind implements river.JobArgs.
func (NotifyEvent) Kind() string { return "notify.event" }

// InsertOpts puts notifications on their own queue.
func (NotifyEvent) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueNotifications, MaxAttempts: 10}
}

// MailSend sends one notification e-mail to UserID. Subject and Body are already in the
// recipient's language Lang; the worker reads the address when it sends, so no address
// sits in a job row and a deleted user gets nothing. ID is the notification's id (also
// when the in-app row was switched off): the Message-ID, and the uniqueness key that
// keeps a retried notification job from sending twice.
type MailSend struct {
	ID      uuid.UUID `json:"id" river:"unique"`
	UserID  uuid.UUID `json:"userId"`
	Type    string    `json:"type"`
	Lang    string    `json:"lang"`
	Subject string    `json:"subject"`
	Body    string    `json:"body"`
	// Link is the web route (/p/KEY/issues/KEY-1); the worker prefixes TW_BASE_URL.
	Link string `json:"link"`
}

// Kind implements river.JobArgs.
func (MailSend) Kind() string { return "notify.mail" }

// InsertOpts gives SMTP River's backoff over ten attempts (about four and a half hours)
// and makes the job unique by ID while one exists, whatever its state short of
// cancelled or discarded.
func (MailSend) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMail, MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// NotifyDigest sends the due e-mail digests once (notify.Digester). It is a periodic
// job (every 5 minutes), enqueued only by the elected leader among the workers.
type NotifyDigest struct{}

// Kind implements river.JobArgs.
func (NotifyDigest) Kind() string { return "notify.digest" }

// InsertOpts: one attempt, since the next run sends whatever this one did not, and
// unique while one waits or runs, as the SLA scan.
func (NotifyDigest) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueNotifications, MaxAttempts: 1, UniqueOpts: whileQueued}
}
