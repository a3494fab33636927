package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Label is a row of labels: a project's coloured tag for issues, unique by name.
type Label struct {
	bun.BaseModel `bun:"table:labels"`

	ID        uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID uuid.UUID `bun:"project_id,type:uuid"`
	Name      string    `bun:"name"`
	Color     string    `bun:"color"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:now()"`
}
