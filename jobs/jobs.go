// Package jobs holds the River job arguments: the contract between the API, which
// inserts jobs inside its transactions, and the workers, which run them. It imports
// nothing of Taskweave's so both sides can depend on it.
package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// Queue names. Each gets its own MaxWorkers in the worker process so a flood of one
// kind of work cannot starve another.
const (
	QueueDefault = river.QueueDefault
	QueueAudit   = "audit"
	// QueueWebhooks carries outgoing deliveries, so a slow receiver never delays audit.
	QueueWebhooks = "webhooks"
	// QueueIntegrations parses incoming GitHub/GitLab payloads.
	QueueIntegrations = "integrations"
	// QueueNotifications turns domain events into in-app notifications.
	QueueNotifications = "notifications"
	// QueueMail sends e-mails, so a slow SMTP relay never delays in-app notifications.
	QueueMail = "mail"
	// QueueAutomation evaluates automation rules and runs their actions.
	QueueAutomation = "automation"
	// QueueServiceDesk runs the SLA breach monitor and the mailbox poll, so a slow IMAP
	// server never delays other work.
	QueueServiceDesk = "servicedesk"
)

// InsertNotifyCooldown is the least time between two notifications of inserted jobs
// per queue from one inserting client: the FetchCooldown of the insert-only River
// client (NewInserter), which does not fetch, so the value only limits how often its
// inserts wake the workers. River's 100 ms default would put up to 100 ms on every
// delivery's latency.
const InsertNotifyCooldown = 5 * time.Millisecond

// Queues lists every queue a worker process serves (QueueStorage only where it has
// both storages).
var Queues = []string{QueueDefault, QueueAudit, QueueWebhooks, QueueIntegrations, QueueNotifications, QueueMail,
	QueueAutomation, QueueServiceDesk, QueueStorage, QueueTasks}

// AuditRecord writes one audit row. The id is chosen when the job is inserted, so a
// retried job never writes the row twice.
type AuditRecord struct {
	ID           uuid.UUID  `json:"id"`
	Timestamp    time.Time  `json:"timestamp"`
	UserID       *uuid.UUID `json:"userId,omitempty"`
	UserEmail    string     `json:"userEmail"`
	ProjectID    *uuid.UUID `json:"projectId,omitempty"`
	OrgID        *uuid.UUID `json:"orgId,omitempty"`
	IssueID      *uuid.UUID `json:"issueId,omitempty"`
	Action       string     `json:"action"`
	Level        string     `json:"level"`
	ResourceType string     `json:"resourceType,omitempty"`
	ResourceID   string     `json:"resourceId,omitempty"`
	Details      string     `json:"details,omitempty"`
	IPAddress    string     `json:"ipAddress,omitempty"`
	UserAgent    string     `json:"userAgent,omitempty"`
}

// Kind implements river.JobArgs.
func (AuditRecord) Kind() string { return "audit.record" }

// InsertOpts puts audit writes on their own queue.
func (AuditRecord) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueAudit, MaxAttempts: 10}
}

// AuditPartitions is the audit log's daily maintenance: it creates the monthly
// partitions ahead and drops the months past Retention (TW_AUDIT_RETENTION; zero keeps
// every month).
type AuditPartitions struct {
	Retention time.Duration `json:"retention"`
}

// Kind implements river.JobArgs.
func (AuditPartitions) Kind() string { return "audit.partitions" }

// InsertOpts runs the maintenance on the audit queue, once at a time.
func (AuditPartitions) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueAudit, UniqueOpts: river.UniqueOpts{ByArgs: true, ByPeriod: time.Hour}}
}
