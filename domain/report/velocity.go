package report

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// VelocityEntry is one CLOSED sprint's planned and completed points (null counts 0).
type VelocityEntry struct {
	SprintID        uuid.UUID `bun:"id"`
	SprintName      string    `bun:"name"`
	PlannedPoints   int64     `bun:"planned_points"`
	CompletedPoints int64     `bun:"completed_points"`
}

// Velocity lists the project's CLOSED sprints in creation order, the order sprints are
// listed and normally run in (end dates may be empty, creation times never are).
func Velocity(ctx context.Context, db bun.IDB, projectID uuid.UUID) ([]VelocityEntry, error) {
	out := []VelocityEntry{}
	err := db.NewRaw(`SELECT id, name, coalesce(planned_points, 0) AS planned_points,
			coalesce(completed_points, 0) AS completed_points
		FROM sprints WHERE project_id = ? AND status = 'CLOSED'
		ORDER BY created_at, id`, projectID).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("velocity of project %s: %w", projectID, err)
	}
	return out, nil
}
