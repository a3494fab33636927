package sprint

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// AddIssue puts an issue of the project into the sprint through the issue update (the
// same rules, SPRINT_CHANGED activity and sprint field change as PATCH with sprintId).
// A CLOSED sprint takes no issues.
func (s *Service) AddIssue(ctx context.Context, p issue.Project, actor issue.Actor, sprintID uuid.UUID, ref issue.Ref) error {
	sp, err := load(ctx, s.db, p.ID, sprintID, false)
	if err != nil {
		return err
	}
	if sp.Status == StatusClosed {
		return fmt.Errorf("%w: add an issue to a CLOSED sprint", ErrState)
	}
	// The update checks the sprint again inside its transaction (a sprint closed in
	// between is refused there with the issue package's SPRINT_STATE error).
	_, err = s.issues.Update(ctx, p, actor, ref, issue.Patch{SprintID: &sprintID})
	return err
}

// RemoveIssue takes an issue out of the sprint back to the backlog through the issue
// update (clearSprint). An issue in another sprint or in none is ErrIssueNotInSprint;
// a CLOSED sprint is history and keeps its issues.
func (s *Service) RemoveIssue(ctx context.Context, p issue.Project, actor issue.Actor, sprintID uuid.UUID, ref issue.Ref) error {
	sp, err := load(ctx, s.db, p.ID, sprintID, false)
	if err != nil {
		return err
	}
	if sp.Status == StatusClosed {
		return fmt.Errorf("%w: remove an issue from a CLOSED sprint", ErrState)
	}
	var row struct {
		ID       uuid.UUID  `bun:"id"`
		SprintID *uuid.UUID `bun:"sprint_id"`
	}
	q := s.db.NewSelect().Table("issues").Column("id", "sprint_id").Where("project_id = ?", p.ID)
	if ref.Key != "" {
		q = q.Where("key = ?", ref.Key)
	} else {
		q = q.Where("id = ?", ref.ID)
	}
	if err := q.Scan(ctx, &row); err != nil {
		if store.IsNotFound(err) {
			return issue.ErrNotFound
		}
		return fmt.Errorf("load issue: %w", err)
	}
	if row.SprintID == nil || *row.SprintID != sprintID {
		return ErrIssueNotInSprint
	}
	// Between this check and the update's row lock another request could move the issue
	// to a different sprint; the clear would then take it out of that one. The window is
	// one round trip and the result is still a valid state (the issue in the backlog).
	_, err = s.issues.Update(ctx, p, actor, issue.Ref{ID: row.ID}, issue.Patch{ClearSprint: true})
	return err
}
