package webhook

import (
	"context"
	"fmt"

	"github.com/google/uuid"
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
// field changed: assignee → issue.assigned, any other field → issue.updated; deleted)
// to sprint start and completion, to created comments and to added attachments.
func RegisterConsumers(bus *event.Bus, cfg Config) {
	Register(bus, cfg, IssueMessage, issue.EventCreated, issue.EventStatusChanged, issue.EventFieldChanged, issue.EventDeleted)
	Register(bus, cfg, SprintMessage, sprint.EventStarted, sprint.EventCompleted)
	Register(bus, cfg, CommentMessage, comment.EventCreated)
	Register(bus, cfg, AttachmentMessage, attachment.EventAdded)
}

// Register adds a consumer that sends the messages mapper makes of the named events to
// every enabled webhook of the event's project subscribed to the message type.
func Register(bus *event.Bus, cfg Config, mapper Mapper, names ...string) {
	maxAttempts := cfg.WithDefaults().MaxAttempts()
	bus.Register(func(ctx context.Context, tx bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
		m, ok := mapper(ev)
		if !ok {
			return nil, nil
		}
		hooks, err := subscribers(ctx, tx, m.ProjectID, m.Type)
		if err != nil || len(hooks) == 0 {
			return nil, err
		}
		_, params, err := createDeliveries(ctx, tx, m, hooks, maxAttempts)
		return params, err
	}, names...)
}

// MaxAttempts is one attempt plus one per retry delay.
func (c Config) MaxAttempts() int { return len(c.RetryDelays) + 1 }

// subscribers finds the project's enabled webhooks subscribed to eventType in one
// query on webhooks_project.
func subscribers(ctx context.Context, db bun.IDB, projectID uuid.UUID, eventType string) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := db.NewSelect().Table("webhooks").Column("id").
		Where("project_id = ? AND enabled AND events @> ARRAY[?]::text[]", projectID, eventType).
		Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("find webhooks of %s for %s: %w", projectID, eventType, err)
	}
	return ids, nil
}

// createDeliveries saves one delivery per webhook (one INSERT on the caller's
// transaction, so records and jobs commit with the change that caused them) and
// returns the jobs that send them.
func createDeliveries(ctx context.Context, db bun.IDB, m Message, hooks []uuid.UUID, maxAttempts int) (
	[]store.WebhookDelivery, []river.InsertManyParams, error) {
	enc, err := newEncoder(m)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]store.WebhookDelivery, len(hooks))
	params := make([]river.InsertManyParams, len(hooks))
	opts := &river.InsertOpts{MaxAttempts: maxAttempts}
	for i, h := range hooks {
		id := uuid.New()
		payload, err := enc.encode(id)
		if err != nil {
			return nil, nil, err
		}
		rows[i] = store.WebhookDelivery{ID: id, WebhookID: h, EventType: m.Type, Payload: payload}
		params[i] = river.InsertManyParams{
			Args:       jobs.WebhookDeliver{DeliveryID: id, WebhookID: h, ProjectID: m.ProjectID, IssueID: m.IssueID},
			InsertOpts: opts,
		}
	}
	if _, err := db.NewInsert().Model(&rows).Returning("created_at").Exec(ctx); err != nil {
		return nil, nil, fmt.Errorf("save %d %s deliveries: %w", len(rows), m.Type, err)
	}
	return rows, params, nil
}

// Data members of the issue events (CONTRACT §11).
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
			Data: issueFieldData{IssueID: e.IssueID, IssueKey: e.IssueKey, Field: e.Field, NewValue: e.NewValue}}
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
