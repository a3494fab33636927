// Package webhook owns outgoing webhooks: the subscriptions a project administers,
// the private-address rule for their URLs, the delivery records domain events create,
// and the signed HTTP POST a worker makes of each record.
package webhook

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/store"
)

// Limits of the stored fields (docs/api-conventions.md#limits).
const (
	MaxURLLength    = 2048
	MaxSecretLength = 64
)

// Audit actions of webhook administration (WRITE level).
const (
	AuditCreated = "WEBHOOK_CREATED"
	AuditDeleted = "WEBHOOK_DELETED"
)

// Errors of webhook administration.
var (
	ErrNotFound         = errors.New("webhook: not found")
	ErrDeliveryNotFound = errors.New("webhook: delivery not found")
	// ErrDisabled refuses a test ping or redelivery on a disabled webhook: like domain
	// events, explicit sends need the webhook enabled
	// (docs/api-conventions.md#events-and-webhooks).
	ErrDisabled = errors.New("webhook: disabled")
)

// Service administers a project's webhooks; its writes and their audit jobs share one
// transaction.
type Service struct {
	db      *bun.DB
	bus     *event.Bus
	audit   *audit.Recorder
	checker Checker
	cfg     Config
}

// NewService builds a Service. cfg gives the URL rule and the attempts of explicit sends.
func NewService(db *bun.DB, bus *event.Bus, rec *audit.Recorder, cfg Config) *Service {
	cfg = cfg.WithDefaults()
	return &Service{db: db, bus: bus, audit: rec, checker: Checker{AllowPrivate: cfg.AllowPrivate, Resolver: cfg.Resolver}, cfg: cfg}
}

// Project is the project a call works in.
type Project struct {
	ID  uuid.UUID
	Key string
}

// entry is the audit entry of action by a on webhook id of p.
func entry(a audit.Actor, action string, p Project, id uuid.UUID, details any) (audit.Entry, error) {
	raw, err := json.Marshal(details)
	if err != nil {
		return audit.Entry{}, fmt.Errorf("audit details: %w", err)
	}
	e := a.Entry(action, "WEBHOOK", id.String(), string(raw))
	e.ProjectID = &p.ID
	return e, nil
}

// NewWebhook is a validated create request; an empty Secret is generated.
type NewWebhook struct {
	URL     string
	Events  []string
	Secret  string
	Enabled bool
}

// Change is a validated update; nil members stay unchanged.
type Change struct {
	URL     *string
	Events  []string
	Enabled *bool
}

// List returns the project's webhooks, oldest first.
func (s *Service) List(ctx context.Context, projectID uuid.UUID) ([]store.Webhook, error) {
	out := []store.Webhook{}
	err := s.db.NewSelect().Model(&out).Where("project_id = ?", projectID).Order("created_at", "id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	return out, nil
}

// Create checks the URL, saves the webhook and returns it with its secret, which is
// shown this once.
func (s *Service) Create(ctx context.Context, by audit.Actor, p Project, in NewWebhook) (*store.Webhook, error) {
	if err := s.checker.Check(ctx, in.URL); err != nil {
		return nil, err
	}
	if in.Secret == "" {
		in.Secret = NewSecret()
	}
	uid := by.UserID
	w := &store.Webhook{ProjectID: p.ID, URL: in.URL, Secret: in.Secret, Events: in.Events, Enabled: in.Enabled, CreatedBy: &uid}
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(w).Returning("*").Exec(ctx); err != nil {
			return err
		}
		e, err := entry(by, AuditCreated, p, w.ID, map[string]any{"url": w.URL, "events": w.Events, "enabled": w.Enabled})
		if err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, e)
	})
	if err != nil {
		return nil, fmt.Errorf("create webhook in %s: %w", p.Key, err)
	}
	return w, nil
}

// Update changes url, events and enabled of a webhook of the project; a new URL is
// checked like on create.
func (s *Service) Update(ctx context.Context, p Project, id uuid.UUID, in Change) (*store.Webhook, error) {
	if in.URL != nil {
		if err := s.checker.Check(ctx, *in.URL); err != nil {
			return nil, err
		}
	}
	w := &store.Webhook{}
	q := s.db.NewUpdate().Model(w).Where("id = ? AND project_id = ?", id, p.ID).Set("updated_at = now()").Returning("*")
	if in.URL != nil {
		q = q.Set("url = ?", *in.URL)
	}
	if in.Events != nil {
		q = q.Set("events = ?", pgdialect.Array(in.Events))
	}
	if in.Enabled != nil {
		q = q.Set("enabled = ?", *in.Enabled)
	}
	if err := q.Scan(ctx); err != nil {
		if store.IsNotFound(err) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("update webhook %s: %w", id, err)
	}
	return w, nil
}

// Delete removes a webhook of the project with its delivery records. Jobs already
// queued find no record and do nothing.
func (s *Service) Delete(ctx context.Context, by audit.Actor, p Project, id uuid.UUID) error {
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var url string
		err := tx.NewDelete().Model((*store.Webhook)(nil)).Where("id = ? AND project_id = ?", id, p.ID).
			Returning("url").Scan(ctx, &url)
		if store.IsNotFound(err) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		e, err := entry(by, AuditDeleted, p, id, map[string]any{"url": url})
		if err != nil {
			return err
		}
		return s.audit.Record(ctx, tx, e)
	})
	if err != nil {
		return fmt.Errorf("delete webhook %s in %s: %w", id, p.Key, err)
	}
	return nil
}

// get loads a webhook of the project.
func get(ctx context.Context, db bun.IDB, projectID, id uuid.UUID) (*store.Webhook, error) {
	w := &store.Webhook{}
	err := db.NewSelect().Model(w).Where("id = ? AND project_id = ?", id, projectID).Scan(ctx)
	if store.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load webhook %s: %w", id, err)
	}
	return w, nil
}

// NewSecret returns 52 base32 characters from crypto/rand (260 bits), within the
// 64-character column.
func NewSecret() string { return rand.Text() + rand.Text() }
