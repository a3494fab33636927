package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Webhook is a row of webhooks: a project's subscription of a URL to event types.
type Webhook struct {
	bun.BaseModel `bun:"table:webhooks"`

	ID        uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID uuid.UUID  `bun:"project_id,type:uuid"`
	URL       string     `bun:"url"`
	Secret    string     `bun:"secret"`
	Events    []string   `bun:"events,array"`
	Enabled   bool       `bun:"enabled"`
	CreatedBy *uuid.UUID `bun:"created_by,type:uuid"`
	CreatedAt time.Time  `bun:"created_at,nullzero,default:now()"`
	UpdatedAt time.Time  `bun:"updated_at,nullzero,default:now()"`
}

// WebhookDelivery is a row of webhook_deliveries: one event sent (or to be sent) to one
// webhook, with the outcome of its latest attempt.
type WebhookDelivery struct {
	bun.BaseModel `bun:"table:webhook_deliveries"`

	ID             uuid.UUID  `bun:"id,pk,type:uuid"`
	WebhookID      uuid.UUID  `bun:"webhook_id,type:uuid"`
	EventType      string     `bun:"event_type"`
	Payload        string     `bun:"payload"`
	ResponseStatus *int       `bun:"response_status"`
	ResponseBody   *string    `bun:"response_body"`
	LastError      *string    `bun:"last_error"`
	AttemptCount   int        `bun:"attempt_count,notnull"`
	NextRetryAt    *time.Time `bun:"next_retry_at"`
	DeliveredAt    *time.Time `bun:"delivered_at"`
	CreatedAt      time.Time  `bun:"created_at,nullzero,default:clock_timestamp()"`
}
