package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Sprint is a row of sprints. StartDate and EndDate are plain dates; PlannedPoints is
// the snapshot taken at start, CompletedPoints the sum stored at completion.
type Sprint struct {
	bun.BaseModel `bun:"table:sprints,alias:sp"`

	ID              uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID       uuid.UUID  `bun:"project_id,type:uuid"`
	Name            string     `bun:"name"`
	Goal            *string    `bun:"goal"`
	Status          string     `bun:"status"`
	StartDate       *time.Time `bun:"start_date,type:date"`
	EndDate         *time.Time `bun:"end_date,type:date"`
	PlannedPoints   *int       `bun:"planned_points"`
	CompletedPoints *int       `bun:"completed_points"`
	CreatedAt       time.Time  `bun:"created_at,nullzero,default:clock_timestamp()"`
}
