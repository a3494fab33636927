package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Organization is a row of organizations; projects may belong to one.
type Organization struct {
	bun.BaseModel `bun:"table:organizations"`

	ID        uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	Name      string    `bun:"name"`
	Slug      string    `bun:"slug"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:now()"`
}

// OrganizationMember is a user's role in an organization (OWNER, ADMIN or MEMBER).
type OrganizationMember struct {
	bun.BaseModel `bun:"table:organization_members"`

	OrgID     uuid.UUID `bun:"org_id,pk,type:uuid"`
	UserID    uuid.UUID `bun:"user_id,pk,type:uuid"`
	Role      string    `bun:"role"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:now()"`
}
