package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Dashboard is a row of dashboards: a project's one dashboard, created on its first read.
type Dashboard struct {
	bun.BaseModel `bun:"table:dashboards,alias:d"`

	ID        uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID uuid.UUID `bun:"project_id,type:uuid"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:now()"`
}

// DashboardWidget is a row of dashboard_widgets: one chart or list placed on a grid.
type DashboardWidget struct {
	bun.BaseModel `bun:"table:dashboard_widgets,alias:w"`

	ID          uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	DashboardID uuid.UUID `bun:"dashboard_id,type:uuid"`
	Type        string    `bun:"type"`
	Config      *string   `bun:"config"`
	GridX       int       `bun:"grid_x"`
	GridY       int       `bun:"grid_y"`
	GridW       int       `bun:"grid_w"`
	GridH       int       `bun:"grid_h"`
	CreatedAt   time.Time `bun:"created_at,nullzero,default:clock_timestamp()"`
}
