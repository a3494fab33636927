package automation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// ActionSendWebhook POSTs the issue, the rule and the event to a URL (Jira's "Send web
// request"), signed like webhooks when the action has a secret.
const ActionSendWebhook = "SEND_WEBHOOK"

// SecretMask stands for a SEND_WEBHOOK secret in every reply: the secret itself is
// never returned. Sent back in an update, it keeps the saved secret of the action
// with the same url.
const SecretMask = "********"

// EventRuleFired is the event type (body `event`, header X-Taskweave-Event) of a
// SEND_WEBHOOK request.
const EventRuleFired = "automation.rule_fired"

// Delivery statuses of a SEND_WEBHOOK request.
const (
	DeliveryPending   = "PENDING"
	DeliveryDelivered = "DELIVERED"
	DeliveryRetrying  = "RETRYING"
	DeliveryFailed    = "FAILED"
)

// urlRef is a SEND_WEBHOOK url to put through the outbound address check.
type urlRef struct {
	field string
	url   string
}

// checkWebhookAction validates SEND_WEBHOOK's params without the network: an http or
// https URL with a host, within the webhook limits, and a secret within them.
func checkWebhookAction(field func(string) string, a Action, rs *refs, ps *problems) {
	raw := strings.TrimSpace(a.Params["url"])
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		ps.add(field("url"), "REQUIRED", "field.AUTOMATION_REQUIRED")
	case len(raw) > webhook.MaxURLLength:
		ps.add(field("url"), "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(webhook.MaxURLLength))
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Opaque != "":
		ps.add(field("url"), "URL_REJECTED", "field.AUTOMATION_URL", "why", "need an http or https URL with a host")
	default:
		rs.urls = append(rs.urls, urlRef{field: field("url"), url: raw})
	}
	if s := a.Params["secret"]; utf8.RuneCountInString(s) > webhook.MaxSecretLength {
		ps.add(field("secret"), "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(webhook.MaxSecretLength))
	}
}

// checkURLs applies the outbound address check (TW_WEBHOOK_ALLOW_PRIVATE) to the
// SEND_WEBHOOK urls, as a webhook's URL is checked when saved.
func (s *Service) checkURLs(ctx context.Context, urls []urlRef) []Problem {
	var ps problems
	for _, u := range urls {
		if err := s.checker.Check(ctx, u.url); err != nil {
			why := strings.TrimPrefix(strings.TrimPrefix(err.Error(), webhook.ErrURLRejected.Error()), ": ")
			ps.add(u.field, "URL_REJECTED", "field.AUTOMATION_URL", "why", why)
		}
	}
	return ps
}

// WithChecker sets the outbound address check of SEND_WEBHOOK urls.
func (s *Service) WithChecker(c webhook.Checker) *Service { s.checker = c; return s }

// masked is r with every SEND_WEBHOOK secret replaced by SecretMask.
func masked(r Rule) Rule {
	for i, a := range r.Actions {
		if a.Type != ActionSendWebhook || a.Params["secret"] == "" {
			continue
		}
		p := make(map[string]string, len(a.Params))
		for k, v := range a.Params {
			p[k] = v
		}
		p["secret"] = SecretMask
		r.Actions[i].Params = p
	}
	return r
}

// unmask gives each SEND_WEBHOOK action of in whose secret is SecretMask the saved
// secret of the action of saved with the same url (none: no secret).
func unmask(in []ActionInput, saved []Action) {
	mask, _ := json.Marshal(SecretMask)
	for i, a := range in {
		if a.Type != ActionSendWebhook || !bytes.Equal(bytes.TrimSpace(a.Params["secret"]), mask) {
			continue
		}
		var u string
		_ = json.Unmarshal(a.Params["url"], &u)
		secret := ""
		for _, s := range saved {
			if s.Type == ActionSendWebhook && strings.TrimSpace(s.Params["url"]) == strings.TrimSpace(u) {
				secret = s.Params["secret"]
				break
			}
		}
		p := make(map[string]json.RawMessage, len(a.Params))
		for k, v := range a.Params {
			p[k] = v
		}
		p["secret"], _ = json.Marshal(secret)
		in[i].Params = p
	}
}

// webhookData is the `data` of a SEND_WEBHOOK body: the rule, the event that triggered
// it and the issue as the rule saw it.
type webhookData struct {
	Rule struct {
		ID   uuid.UUID `json:"id"`
		Name string    `json:"name"`
	} `json:"rule"`
	Event struct {
		ID         uuid.UUID `json:"id"`
		Type       string    `json:"type"`
		ChainDepth int       `json:"chainDepth"`
	} `json:"event"`
	Issue struct {
		IssueID     uuid.UUID  `json:"issueId"`
		IssueKey    string     `json:"issueKey"`
		Title       string     `json:"title"`
		Type        string     `json:"type"`
		Priority    string     `json:"priority"`
		StatusID    uuid.UUID  `json:"statusId"`
		AssigneeID  *uuid.UUID `json:"assigneeId"`
		ReporterID  uuid.UUID  `json:"reporterId"`
		StoryPoints *int       `json:"storyPoints"`
	} `json:"issue"`
}

// insertDeliverySQL writes a SEND_WEBHOOK delivery row.
const insertDeliverySQL = `INSERT INTO automation_webhook_deliveries (id, rule_id, project_id, issue_id, event_id, url, secret, payload)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`

// sendWebhook writes the delivery row of a and its job, in the rule's transaction: the
// request is sent only if the rule commits, and once whatever retries the evaluation.
func (r *run) sendWebhook(ctx context.Context, a Action) error {
	id := newID()
	var d webhookData
	d.Rule.ID, d.Rule.Name = r.rule.ID, r.rule.Name
	d.Event.ID, d.Event.Type, d.Event.ChainDepth = r.job.EventID, r.job.Trigger, r.job.ChainDepth
	s := r.subj
	d.Issue.IssueID, d.Issue.IssueKey, d.Issue.Title, d.Issue.Type, d.Issue.Priority = s.ID, s.IssueKey, s.Title, s.Type, s.Priority
	d.Issue.StatusID, d.Issue.AssigneeID, d.Issue.ReporterID, d.Issue.StoryPoints = s.StatusID, s.AssigneeID, s.ReporterID, s.StoryPoints
	issueID := s.ID
	body, err := webhook.Body(webhook.Message{Type: EventRuleFired, ProjectID: s.ProjectID, ProjectKey: s.ProjectKey,
		IssueID: &issueID, Data: d, At: time.Now()}, id)
	if err != nil {
		return err
	}
	target := strings.TrimSpace(a.Params["url"])
	if _, err := r.tx.Tx.ExecContext(ctx, insertDeliverySQL, store.UUID(id), store.UUID(r.rule.ID), store.UUID(s.ProjectID),
		store.UUID(s.ID), store.UUID(r.job.EventID), target, a.Params["secret"], body); err != nil {
		return fmt.Errorf("write web request: %w", err)
	}
	attempts := r.engine.WebhookAttempts
	if attempts <= 0 {
		attempts = webhook.Config{}.WithDefaults().MaxAttempts()
	}
	return r.engine.Bus.Enqueue(ctx, r.tx, river.InsertManyParams{
		Args:       jobs.AutomationWebhook{DeliveryID: id, RuleID: r.rule.ID, ProjectID: s.ProjectID, IssueID: s.ID},
		InsertOpts: &river.InsertOpts{MaxAttempts: attempts},
	})
}

// Delivery is one SEND_WEBHOOK request and what became of it, as its log lists it.
type Delivery struct {
	ID             uuid.UUID  `bun:"id"`
	RuleID         uuid.UUID  `bun:"rule_id"`
	IssueID        *uuid.UUID `bun:"issue_id"`
	EventID        uuid.UUID  `bun:"event_id"`
	URL            string     `bun:"url"`
	Payload        string     `bun:"payload"`
	Status         string     `bun:"status"`
	Attempts       int        `bun:"attempts"`
	ResponseStatus *int       `bun:"response_status"`
	ResponseBody   *string    `bun:"response_body"`
	LastError      *string    `bun:"last_error"`
	NextRetryAt    *time.Time `bun:"next_retry_at"`
	CreatedAt      time.Time  `bun:"created_at"`
	LastAttemptAt  *time.Time `bun:"last_attempt_at"`
	DeliveredAt    *time.Time `bun:"delivered_at"`
}

// deliveryColumns are Delivery's columns (the secret is never read for a listing).
const deliveryColumns = `id, rule_id, issue_id, event_id, url, payload, status, attempts, response_status, response_body,
	last_error, next_retry_at, created_at, last_attempt_at, delivered_at`

// Deliveries returns one page of a rule's SEND_WEBHOOK requests, newest first, and
// their total.
func (s *Service) Deliveries(ctx context.Context, sc Scope, ruleID uuid.UUID, after *store.After, offset, limit int) ([]Delivery, int, error) {
	exists, err := sc.where(s.db.NewSelect().TableExpr("automation_rules AS r").Where("r.id = ?", ruleID)).Exists(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("find rule: %w", err)
	}
	if !exists {
		return nil, 0, ErrNotFound
	}
	count, err := s.db.NewSelect().Table("automation_webhook_deliveries").Where("rule_id = ?", ruleID).Count(ctx)
	n := int(count)
	if err != nil {
		return nil, 0, fmt.Errorf("count web requests: %w", err)
	}
	out := []Delivery{}
	if n <= offset {
		return out, n, nil
	}
	q := s.db.NewSelect().Table("automation_webhook_deliveries").ColumnExpr(deliveryColumns).Where("rule_id = ?", ruleID)
	if after != nil {
		q = q.Where("(created_at, id) < (?, ?)", after.Time, after.ID)
	}
	err = q.OrderExpr("created_at DESC, id DESC").Offset(int64(offset)).Limit(int64(limit)).Scan(ctx, &out)
	if err != nil {
		return nil, 0, fmt.Errorf("list web requests: %w", err)
	}
	return out, n, nil
}

// PendingDelivery is what the worker sends.
type PendingDelivery struct {
	ID      uuid.UUID `bun:"id"`
	URL     string    `bun:"url"`
	Secret  string    `bun:"secret"`
	Payload string    `bun:"payload"`
	Status  string    `bun:"status"`
}

// ErrDeliveryGone is a delivery whose rule was deleted since (its log with it).
var ErrDeliveryGone = errors.New("automation: web request gone with its rule")

// LoadDelivery reads a delivery to send.
func LoadDelivery(ctx context.Context, db bun.IDB, id uuid.UUID) (*PendingDelivery, error) {
	var d PendingDelivery
	err := db.NewSelect().Table("automation_webhook_deliveries").Column("id", "url", "secret", "payload", "status").
		Where("id = ?", id).Scan(ctx, &d)
	if store.IsNotFound(err) {
		return nil, ErrDeliveryGone
	}
	if err != nil {
		return nil, fmt.Errorf("read web request %s: %w", id, err)
	}
	return &d, nil
}

// RecordAttempt stores an attempt's outcome: DELIVERED on a 2xx, RETRYING with the
// next attempt's time, FAILED after the last.
func RecordAttempt(ctx context.Context, db bun.IDB, id uuid.UUID, status *int, body *string, sendErr error, final bool, next time.Time) error {
	state, nextAt := DeliveryDelivered, (*time.Time)(nil)
	var lastErr *string
	if sendErr != nil {
		msg := truncate(sendErr.Error(), executionDetailMaxRunes)
		lastErr = &msg
		state = DeliveryFailed
		if !final {
			state, nextAt = DeliveryRetrying, &next
		}
	}
	_, err := db.NewUpdate().Table("automation_webhook_deliveries").
		Set("status = ?, attempts = attempts + 1, response_status = ?, response_body = ?, last_error = ?", state, status, body, lastErr).
		Set("next_retry_at = ?, last_attempt_at = clock_timestamp()", nextAt).
		Set("delivered_at = CASE WHEN ? THEN clock_timestamp() ELSE delivered_at END", state == DeliveryDelivered).
		Where("id = ?", id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record web request %s: %w", id, err)
	}
	return nil
}
