package webhook

import (
	"context"
	"fmt"
	"slices"

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
// a transaction's events together: one subscriber lookup and one delivery insert for
// all of them, however many events and webhooks.
func Register(bus *event.Bus, cfg Config, mapper Mapper, names ...string) {
	maxAttempts := cfg.WithDefaults().MaxAttempts()
	bus.RegisterBatch(func(ctx context.Context, tx bun.Tx, evs []event.Event) ([]river.InsertManyParams, error) {
		msgs := make([]Message, 0, len(evs))
		for _, ev := range evs {
			if m, ok := mapper(ev); ok {
				msgs = append(msgs, m)
			}
		}
		if len(msgs) == 0 {
			return nil, nil
		}
		hooks, err := subscribers(ctx, tx, msgs)
		if err != nil || len(hooks) == 0 {
			return nil, err
		}
		_, params, err := createDeliveries(ctx, tx, msgs, hooks, maxAttempts)
		return params, err
	}, names...)
}

// MaxAttempts is one attempt plus one per retry delay.
func (c Config) MaxAttempts() int { return len(c.RetryDelays) + 1 }

// subscription is an enabled webhook subscribed to one event type.
type subscription struct {
	ID        uuid.UUID `bun:"id"`
	ProjectID uuid.UUID `bun:"project_id"`
	Event     string    `bun:"event"`
}

// wants reports whether the webhook subscribed to m's project and type.
func (s subscription) wants(m Message) bool {
	return s.ProjectID == m.ProjectID && s.Event == m.Type
}

// subscribers reads, in one query on webhooks_project, the enabled webhooks of the
// messages' projects with each of their event types the messages have: one row per
// webhook and type, so no array is decoded per row.
func subscribers(ctx context.Context, db bun.IDB, msgs []Message) ([]subscription, error) {
	var projects []uuid.UUID
	var types []string
	for _, m := range msgs {
		if !slices.Contains(projects, m.ProjectID) {
			projects = append(projects, m.ProjectID)
		}
		if !slices.Contains(types, m.Type) {
			types = append(types, m.Type)
		}
	}
	var hooks []subscription
	err := db.NewRaw(`SELECT DISTINCT w.id, w.project_id, e.event FROM webhooks AS w, unnest(w.events) AS e(event)
		WHERE w.project_id IN (?) AND w.enabled AND e.event IN (?)`, bun.In(projects), bun.In(types)).Scan(ctx, &hooks)
	if err != nil {
		return nil, fmt.Errorf("find webhooks of %d projects: %w", len(projects), err)
	}
	return hooks, nil
}

// createDeliveries saves one delivery per message and subscribed webhook (one INSERT on
// the caller's transaction, so records and jobs commit with the change that caused them)
// and returns the jobs that send them.
func createDeliveries(ctx context.Context, db bun.IDB, msgs []Message, hooks []subscription, maxAttempts int) (
	[]store.WebhookDelivery, []river.InsertManyParams, error) {
	var (
		rows   []store.WebhookDelivery
		params []river.InsertManyParams
	)
	opts := &river.InsertOpts{MaxAttempts: maxAttempts}
	for _, m := range msgs {
		var enc *encoder
		for _, h := range hooks {
			if !h.wants(m) {
				continue
			}
			if enc == nil {
				e, err := newEncoder(m)
				if err != nil {
					return nil, nil, err
				}
				enc = e
			}
			id := uuid.New()
			payload, err := enc.encode(id)
			if err != nil {
				return nil, nil, err
			}
			rows = append(rows, store.WebhookDelivery{ID: id, WebhookID: h.ID, EventType: m.Type, Payload: payload})
			params = append(params, river.InsertManyParams{
				Args:       jobs.WebhookDeliver{DeliveryID: id, WebhookID: h.ID, ProjectID: m.ProjectID, IssueID: m.IssueID},
				InsertOpts: opts,
			})
		}
	}
	if len(rows) == 0 {
		return nil, nil, nil
	}
	if _, err := db.NewInsert().Model(&rows).Returning("created_at").Exec(ctx); err != nil {
		return nil, nil, fmt.Errorf("save %d deliveries: %w", len(rows), err)
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
