package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/sprint"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// Mapper turns a domain event into the webhook message it causes; ok is false when the
// event sends nothing. Sprint, comment and attachment events join by registering a
// Mapper for their event names (see Register).
type Mapper func(ev event.Event) (m Message, ok bool)

// RegisterConsumers subscribes webhooks to the issue events (created, status changed,
// field changed: assignee → issue.assigned, any other field → issue.updated; deleted),
// to sprint start and completion, to created comments and to added attachments.
func RegisterConsumers(bus *event.Bus, cfg Config) {
	Register(bus, cfg, IssueMessage, issue.EventCreated, issue.EventStatusChanged, issue.EventFieldChanged, issue.EventDeleted)
	Register(bus, cfg, SprintMessage, sprint.EventStarted, sprint.EventCompleted)
	Register(bus, cfg, CommentMessage, comment.EventCreated)
	Register(bus, cfg, AttachmentMessage, attachment.EventAdded)
}

// Register adds a consumer that sends the messages mapper makes of the named events to
// every enabled webhook of the event's project subscribed to the message type. It takes
// a transaction's events together: one statement finds the subscribers and saves the
// delivery records of all of them, however many events and webhooks, and answers the
// webhook.deliver jobs to queue, which the bus inserts through River's client.
func Register(bus *event.Bus, cfg Config, mapper Mapper, names ...string) {
	maxAttempts := cfg.WithDefaults().MaxAttempts()
	bus.RegisterPrefetch(enabledPrefetch, names...)
	bus.RegisterBatch(func(ctx context.Context, tx bun.Tx, evs []event.Event) ([]river.InsertManyParams, error) {
		msgs := make([]Message, 0, len(evs))
		for _, ev := range evs {
			m, ok := mapper(ev)
			if !ok {
				continue
			}
			// An emitter that read ahead that the project has no enabled webhook saves the
			// statement (a webhook enabled in the microseconds since is as one enabled
			// just after this change).
			if has, known := event.Memoized[bool](ctx, enabledKey(m.ProjectID)); known && !has {
				continue
			}
			msgs = append(msgs, m)
		}
		if len(msgs) == 0 {
			return nil, nil
		}
		return saveDeliveries(ctx, tx, msgs, maxAttempts)
	}, names...)
}

// enabledPrefetch lets an emitter read ahead whether the project has an enabled webhook
// (event.Prefetch): when it has none, the batch consumer sends no statement.
var enabledPrefetch = event.Prefetch{
	Key: enabledKey,
	SQL: func(project string) string {
		return "EXISTS (SELECT 1 FROM webhooks WHERE project_id = " + project + " AND enabled)::text"
	},
	Decode: func(s string) (any, error) { return strconv.ParseBool(s) },
}

func enabledKey(projectID uuid.UUID) string { return "webhook.enabled." + projectID.String() }

// MaxAttempts is one attempt plus one per retry delay.
func (c Config) MaxAttempts() int { return len(c.RetryDelays) + 1 }

// saveSQL finds the subscribers of a batch of messages and saves one delivery record
// per message and subscriber, in one statement on the caller's transaction (records and
// jobs commit with the change that caused them).
//
// $1..$4 and $6 are the messages (index, project, event type, body up to the delivery
// id, issue); $5, when set, is the one webhook to deliver to whatever its subscriptions
// (the test ping). Each body is completed with its delivery id, which the body ends
// with. The ids are drawn once in d, which the insert and the reply both read.
//
// The subscribers are read with a key-share lock, what a foreign key from the records to
// their webhook would take for every record (migration 0019): a webhook being deleted
// waits for this transaction, whose records its delete trigger then removes, and a
// webhook already being deleted makes this statement wait and find it gone.
const saveSQL = `WITH m AS (
	SELECT * FROM unnest($1::int[], $2::uuid[], $3::text[], $4::text[], $6::uuid[]) AS m(i, project_id, event, head, issue_id)
), w AS (
	SELECT id, project_id, enabled, events FROM webhooks WHERE project_id = ANY ($2::uuid[]) FOR KEY SHARE
), d AS (
	SELECT gen_random_uuid() AS id, w.id AS webhook_id, m.i, m.event, m.head, m.project_id, m.issue_id
	FROM m JOIN w ON w.project_id = m.project_id
	WHERE CASE WHEN $5::uuid IS NULL THEN w.enabled AND m.event = ANY (w.events) ELSE w.id = $5::uuid END
), ins AS (
	INSERT INTO webhook_deliveries (id, webhook_id, event_type, payload)
	SELECT id, webhook_id, event, head || id::text || '"}' FROM d
	RETURNING id, created_at
)
`

// createSQL is saveSQL answering the records saved, in webhook and message order.
const createSQL = saveSQL + `SELECT d.id, d.webhook_id, d.i, ins.created_at FROM d JOIN ins ON ins.id = d.id ORDER BY d.webhook_id, d.i`

// jobsSQL is saveSQL answering the jobs that send the records: one per webhook and $7
// of its deliveries, in message order, with the distinct issues they are about.
const jobsSQL = saveSQL + `, numbered AS (
	SELECT d.*, (row_number() OVER (PARTITION BY webhook_id ORDER BY i) - 1) / $7::int AS job FROM d JOIN ins ON ins.id = d.id
)
SELECT json_build_object('deliveryIds', array_agg(id ORDER BY i), 'webhookId', webhook_id, 'projectId', project_id,
	'issueIds', array_agg(DISTINCT issue_id) FILTER (WHERE issue_id IS NOT NULL))::text
FROM numbered GROUP BY webhook_id, project_id, job`

// createDeliveries saves the delivery records of msgs (to their subscribers, or to the
// webhook only when not nil) and returns them in webhook and message order; the caller
// queues their jobs.
func createDeliveries(ctx context.Context, tx bun.Tx, msgs []Message, only *uuid.UUID) ([]store.WebhookDelivery, error) {
	args, heads, err := saveArgs(msgs, only)
	if err != nil {
		return nil, err
	}
	rows, err := tx.Tx.QueryContext(ctx, createSQL, args...)
	if err != nil {
		return nil, fmt.Errorf("save deliveries of %d messages: %w", len(msgs), err)
	}
	defer rows.Close()
	var out []store.WebhookDelivery
	for rows.Next() {
		var (
			d store.WebhookDelivery
			i int
		)
		if err := rows.Scan(&d.ID, &d.WebhookID, &i, &d.CreatedAt); err != nil {
			return nil, fmt.Errorf("save deliveries: %w", err)
		}
		d.EventType, d.Payload = msgs[i].Type, heads[i]+d.ID.String()+bodyTail
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("save deliveries: %w", err)
	}
	return out, nil
}

// saveDeliveries saves the delivery records of msgs for every subscriber and answers
// the jobs that send them.
func saveDeliveries(ctx context.Context, tx bun.Tx, msgs []Message, maxAttempts int) ([]river.InsertManyParams, error) {
	args, _, err := saveArgs(msgs, nil)
	if err != nil {
		return nil, err
	}
	rows, err := tx.Tx.QueryContext(ctx, jobsSQL, append(args, jobs.DeliveriesPerJob)...)
	if err != nil {
		return nil, fmt.Errorf("save deliveries of %d messages: %w", len(msgs), err)
	}
	defer rows.Close()
	var out []river.InsertManyParams
	for rows.Next() {
		var (
			a   jobs.WebhookDeliver
			raw []byte
		)
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("save deliveries: %w", err)
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("save deliveries: %w", err)
		}
		out = append(out, river.InsertManyParams{Args: a, InsertOpts: &river.InsertOpts{MaxAttempts: maxAttempts}})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("save deliveries: %w", err)
	}
	return out, nil
}

// saveArgs are saveSQL's parameters for msgs, and each message's body up to its
// delivery id.
func saveArgs(msgs []Message, only *uuid.UUID) (args []any, heads []string, err error) {
	var (
		index    = make([]int32, len(msgs))
		projects = make([][16]byte, len(msgs))
		types    = make([]string, len(msgs))
		issues   = make([]pgtype.UUID, len(msgs))
		webhook  pgtype.UUID
	)
	heads = make([]string, len(msgs))
	for i, m := range msgs {
		head, err := bodyHead(m)
		if err != nil {
			return nil, nil, err
		}
		index[i], projects[i], types[i], heads[i] = int32(i), m.ProjectID, m.Type, head
		if m.IssueID != nil {
			issues[i] = pgtype.UUID{Bytes: *m.IssueID, Valid: true}
		}
	}
	if only != nil {
		webhook = pgtype.UUID{Bytes: *only, Valid: true}
	}
	// Sent with parameters straight to database/sql: bun would inline every value into a
	// fresh statement text, which Postgres parses and plans each time. The ids go as
	// pgtype values, which pgx encodes in binary (a uuid.UUID would go through its
	// driver.Valuer, as text).
	return []any{index, projects, types, heads, webhook, issues}, heads, nil
}

// Data members of the issue events (docs/api-conventions.md#events-and-webhooks).
type (
	issueCreatedData struct {
		IssueID  uuid.UUID `json:"issueId"`
		IssueKey string    `json:"issueKey"`
		Title    string    `json:"title"`
	}
	issueStatusData struct {
		IssueID   uuid.UUID `json:"issueId"`
		IssueKey  string    `json:"issueKey"`
		OldStatus string    `json:"oldStatus"`
		NewStatus string    `json:"newStatus"`
	}
	issueFieldData struct {
		IssueID  uuid.UUID `json:"issueId"`
		IssueKey string    `json:"issueKey"`
		Field    string    `json:"field"`
		NewValue string    `json:"newValue"`
		// Set for field "customField" only: which custom field changed.
		CustomFieldID   *uuid.UUID `json:"customFieldId,omitempty"`
		CustomFieldName string     `json:"customFieldName,omitempty"`
	}
	issueDeletedData struct {
		IssueID  uuid.UUID `json:"issueId"`
		IssueKey string    `json:"issueKey"`
	}
)

// IssueMessage maps the issue events to their webhook messages. newValue of updates is
// the display value ("" when cleared): the assignee's name, not their id.
func IssueMessage(ev event.Event) (Message, bool) {
	var (
		s  issue.Subject
		m  Message
		ok = true
	)
	switch e := ev.(type) {
	case issue.Created:
		s, m = e.Subject, Message{Type: EventIssueCreated, At: e.At,
			Data: issueCreatedData{IssueID: e.IssueID, IssueKey: e.IssueKey, Title: e.Title}}
	case issue.StatusChanged:
		s, m = e.Subject, Message{Type: EventIssueStatusChanged, At: e.At,
			Data: issueStatusData{IssueID: e.IssueID, IssueKey: e.IssueKey, OldStatus: e.OldStatusName, NewStatus: e.NewStatusName}}
	case issue.FieldChanged:
		t := EventIssueUpdated
		if e.Field == issue.FieldAssignee {
			t = EventIssueAssigned
		}
		s, m = e.Subject, Message{Type: t, At: e.At,
			Data: issueFieldData{IssueID: e.IssueID, IssueKey: e.IssueKey, Field: e.Field, NewValue: e.NewValue,
				CustomFieldID: e.CustomFieldID, CustomFieldName: e.CustomFieldName}}
	case issue.Deleted:
		s, m = e.Subject, Message{Type: EventIssueDeleted, At: e.At,
			Data: issueDeletedData{IssueID: e.IssueID, IssueKey: e.IssueKey}}
	default:
		ok = false
	}
	if !ok {
		return Message{}, false
	}
	id := s.IssueID
	m.ProjectID, m.ProjectKey, m.IssueID = s.ProjectID, s.ProjectKey, &id
	return m, true
}
