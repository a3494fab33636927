package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Project is a row of projects.
type Project struct {
	bun.BaseModel `bun:"table:projects"`

	ID          uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	Key         string     `bun:"key"`
	Name        string     `bun:"name"`
	Description *string    `bun:"description"`
	OwnerID     uuid.UUID  `bun:"owner_id,type:uuid"`
	WorkflowID  *uuid.UUID `bun:"workflow_id,type:uuid"`
	Archived    bool       `bun:"archived"`
	NodeID      *string    `bun:"node_id"`
	OrgID       *uuid.UUID `bun:"org_id,type:uuid"`
	IssueSeq    int        `bun:"issue_seq"`
	CreatedAt   time.Time  `bun:"created_at,nullzero,default:now()"`
	UpdatedAt   time.Time  `bun:"updated_at,nullzero,default:now()"`
}

// ProjectMember is an explicit membership row.
type ProjectMember struct {
	bun.BaseModel `bun:"table:project_members"`

	ID        uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID uuid.UUID `bun:"project_id,type:uuid"`
	UserID    uuid.UUID `bun:"user_id,type:uuid"`
	Role      string    `bun:"role"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:now()"`
}
