// Package report computes a project's agile reports (burndown, velocity, cycle time)
// in SQL over sprints, issues and their activity rows, so a report costs a constant
// number of queries whatever the sprint holds.
package report

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// Errors of report rule 1 (docs/api-conventions.md#reports): the sprint must exist and
// belong to the project in the path.
var (
	ErrSprintNotFound     = errors.New("report: sprint not found")
	ErrSprintNotInProject = errors.New("report: sprint belongs to another project")
)

// checkSprint enforces rule 1 for sprintID within projectID.
func checkSprint(ctx context.Context, db bun.IDB, projectID, sprintID uuid.UUID) error {
	var owner uuid.UUID
	err := db.NewRaw("SELECT project_id FROM sprints WHERE id = ?", sprintID).Scan(ctx, &owner)
	switch err = store.Translate(err); {
	case store.IsNotFound(err):
		return ErrSprintNotFound
	case err != nil:
		return fmt.Errorf("find sprint %s: %w", sprintID, err)
	case owner != projectID:
		return ErrSprintNotInProject
	}
	return nil
}
