// Package pipeline answers "what happens when an issue moves?": it is the one place where
// every consumer of domain events is registered on the event bus. The API process and
// the worker process both build their bus here, so a change made by a request and the
// same change made by a job (an automation action, an SLA escalation) reach exactly the
// same consumers, in the same transaction. See docs/design.md#event-flow.
package pipeline

import (
	"database/sql"

	"github.com/riverqueue/river"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/notify"
	"github.com/taskweave/taskweave/domain/realtime"
	"github.com/taskweave/taskweave/domain/sprint"
	"github.com/taskweave/taskweave/domain/webhook"
)

// Config is what the consumers need to know of the configuration.
type Config struct {
	// Webhook is the outgoing webhook configuration (retries, so a job's max attempts).
	Webhook webhook.Config
}

// Pipeline is a bus with every consumer registered, and the audit recorder the domain
// services write their own audit entries through.
type Pipeline struct {
	Bus   *event.Bus
	Audit *audit.Recorder
}

// New registers every consumer on a bus over inserter (jobs.NewInserter).
//
// An issue event (created, status changed, field changed, deleted) reaches, in order:
//   - audit: an audit.record job when the project's audit level asks for it;
//   - notify: a notify.event job that turns it into in-app notifications, live pushes
//     and e-mails for watchers, assignee and reporter;
//   - realtime (status changes only): a NOTIFY on the transaction that every API
//     replica's STOMP hub relays to /topic/projects/{key} after commit;
//   - webhook: the delivery records and webhook.deliver jobs of every subscribed
//     webhook, in one statement for all the transaction's events;
//   - automation (created, status, priority and assignee changes): an
//     automation.evaluate job when the project has an enabled rule for the trigger.
//
// Sprint start and completion reach audit, realtime, webhook and automation (a job per
// issue of the sprint); a new comment reaches audit, notify, webhook and automation
// (unless an automation rule wrote it); an added attachment reaches webhook. A rule
// that fired (automation.Fired) reaches audit.
func New(inserter *river.Client[*sql.Tx], cfg Config) *Pipeline {
	bus := event.NewBus(inserter)
	rec := audit.NewRecorder(bus)

	issue.RegisterConsumers(bus, rec)
	sprint.RegisterConsumers(bus, rec)
	comment.RegisterConsumers(bus, rec)
	notify.RegisterConsumers(bus)
	realtime.Register(bus)
	webhook.RegisterConsumers(bus, cfg.Webhook.WithDefaults())
	automation.RegisterConsumers(bus, rec)

	return &Pipeline{Bus: bus, Audit: rec}
}
