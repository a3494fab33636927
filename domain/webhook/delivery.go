package webhook

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// Deliveries lists a page of a webhook's delivery records, newest first; a webhook of
// another project is not found.
func (s *Service) Deliveries(ctx context.Context, projectID, webhookID uuid.UUID, offset, limit int) ([]store.WebhookDelivery, error) {
	if _, err := get(ctx, s.db, projectID, webhookID); err != nil {
		return nil, err
	}
	out := []store.WebhookDelivery{}
	err := s.db.NewSelect().Model(&out).Where("webhook_id = ?", webhookID).
		OrderExpr("created_at DESC, id DESC").Offset(int64(offset)).Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list deliveries of %s: %w", webhookID, err)
	}
	return out, nil
}

// Ping saves a `ping` delivery for the webhook and queues its job in the same
// transaction; the worker sends it like any other delivery.
func (s *Service) Ping(ctx context.Context, p Project, webhookID uuid.UUID) (*store.WebhookDelivery, error) {
	var d store.WebhookDelivery
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		w, err := get(ctx, tx, p.ID, webhookID)
		if err != nil {
			return err
		}
		if !w.Enabled {
			return ErrDisabled
		}
		rows, err := createDeliveries(ctx, tx, []Message{{Type: EventPing, ProjectID: p.ID, ProjectKey: p.Key}}, &w.ID)
		if err != nil {
			return err
		}
		d = rows[0]
		return s.bus.Enqueue(ctx, tx, river.InsertManyParams{
			Args:       jobs.WebhookDeliver{DeliveryIDs: []uuid.UUID{d.ID}, WebhookID: w.ID, ProjectID: p.ID},
			InsertOpts: &river.InsertOpts{MaxAttempts: s.cfg.MaxAttempts()},
		})
	})
	if err != nil {
		return nil, fmt.Errorf("ping webhook %s: %w", webhookID, err)
	}
	return &d, nil
}

// Redeliver queues a new job for an existing delivery record: the same id and payload
// are sent again (a receiver deduplicating on the Delivery header sees a repeat).
// attempt_count keeps counting across redeliveries; the new job gets the full retry
// schedule of its own.
func (s *Service) Redeliver(ctx context.Context, p Project, webhookID, deliveryID uuid.UUID) (*store.WebhookDelivery, error) {
	var d store.WebhookDelivery
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		w, err := get(ctx, tx, p.ID, webhookID)
		if err != nil {
			return err
		}
		err = tx.NewSelect().Model(&d).Where("id = ? AND webhook_id = ?", deliveryID, webhookID).Scan(ctx)
		if store.IsNotFound(err) {
			return ErrDeliveryNotFound
		}
		if err != nil {
			return err
		}
		if !w.Enabled {
			return ErrDisabled
		}
		args := jobs.WebhookDeliver{DeliveryIDs: []uuid.UUID{d.ID}, WebhookID: w.ID, ProjectID: p.ID}
		if issueID := payloadIssue(d.Payload); issueID != nil {
			args.IssueIDs = []uuid.UUID{*issueID}
		}
		return s.bus.Enqueue(ctx, tx, river.InsertManyParams{
			Args:       args,
			InsertOpts: &river.InsertOpts{MaxAttempts: s.cfg.MaxAttempts()},
		})
	})
	if err != nil {
		return nil, fmt.Errorf("redeliver %s: %w", deliveryID, err)
	}
	return &d, nil
}

// payloadIssue reads data.issueId back from a stored body, so a redelivery's job can be
// found by issue like the first one.
func payloadIssue(payload string) *uuid.UUID {
	var b struct {
		Data struct {
			IssueID *uuid.UUID `json:"issueId"`
		} `json:"data"`
	}
	if json.Unmarshal([]byte(payload), &b) != nil {
		return nil
	}
	return b.Data.IssueID
}
