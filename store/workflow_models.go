package store

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Workflow is a row of workflows.
type Workflow struct {
	bun.BaseModel `bun:"table:workflows"`

	ID        uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	Name      string    `bun:"name"`
	ProjectID uuid.UUID `bun:"project_id,type:uuid"`
	IsDefault bool      `bun:"is_default"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:now()"`
}

// WorkflowStatus is a row of workflow_statuses.
type WorkflowStatus struct {
	bun.BaseModel `bun:"table:workflow_statuses"`

	ID         uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	WorkflowID uuid.UUID `bun:"workflow_id,type:uuid"`
	Name       string    `bun:"name"`
	Category   string    `bun:"category"`
	Color      string    `bun:"color"`
	Position   int       `bun:"position"`
	CreatedAt  time.Time `bun:"created_at,nullzero,default:now()"`
}

// WorkflowTransition is a row of workflow_transitions; Guards is the raw JSON array.
type WorkflowTransition struct {
	bun.BaseModel `bun:"table:workflow_transitions"`

	ID           uuid.UUID       `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	WorkflowID   uuid.UUID       `bun:"workflow_id,type:uuid"`
	FromStatusID *uuid.UUID      `bun:"from_status_id,type:uuid"`
	ToStatusID   uuid.UUID       `bun:"to_status_id,type:uuid"`
	Guards       json.RawMessage `bun:"guards,type:jsonb,nullzero"`
	CreatedAt    time.Time       `bun:"created_at,nullzero,default:now()"`
}
