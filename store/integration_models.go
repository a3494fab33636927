package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// ProjectIntegration is a row of project_integrations: a project's link to one code
// host, with the secret that authenticates the host's incoming events.
type ProjectIntegration struct {
	bun.BaseModel `bun:"table:project_integrations"`

	ID            uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID     uuid.UUID `bun:"project_id,type:uuid"`
	Provider      string    `bun:"provider"`
	WebhookSecret string    `bun:"webhook_secret"`
	RepoURL       *string   `bun:"repo_url"`
	CreatedAt     time.Time `bun:"created_at,nullzero,default:clock_timestamp()"`
}

// IncomingEvent is a row of incoming_events: a provider payload exactly as received,
// parsed later by the integration worker.
type IncomingEvent struct {
	bun.BaseModel `bun:"table:incoming_events"`

	ID          uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID   uuid.UUID  `bun:"project_id,type:uuid"`
	Provider    string     `bun:"provider"`
	EventName   string     `bun:"event_name"`
	Payload     []byte     `bun:"payload,type:bytea"`
	ReceivedAt  time.Time  `bun:"received_at,nullzero,default:now()"`
	ProcessedAt *time.Time `bun:"processed_at"`
}

// IssueRef is a row of issue_refs: a commit or pull/merge request that names an issue.
type IssueRef struct {
	bun.BaseModel `bun:"table:issue_refs"`

	ID         uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	IssueID    uuid.UUID `bun:"issue_id,type:uuid"`
	Provider   string    `bun:"provider"`
	RefType    string    `bun:"ref_type"`
	ExternalID string    `bun:"external_id"`
	URL        string    `bun:"url"`
	Title      *string   `bun:"title"`
	CreatedAt  time.Time `bun:"created_at,nullzero,default:clock_timestamp()"`
}
