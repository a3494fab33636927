package sprint

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// Start makes a PLANNED sprint ACTIVE: startDate becomes today (UTC) when empty and
// plannedPoints the sum of its issues' story points now (0 for none). The database's
// partial unique index refuses a second ACTIVE sprint, so of two concurrent starts in
// one project exactly one wins; the other gets ErrAlreadyActive.
func (s *Service) Start(ctx context.Context, p issue.Project, actor issue.Actor, id uuid.UUID) (*store.Sprint, error) {
	var out *store.Sprint
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		sp, err := load(ctx, tx, p.ID, id, true)
		if err != nil {
			return err
		}
		if sp.Status != StatusPlanned {
			return fmt.Errorf("%w: start a %s sprint", ErrState, sp.Status)
		}
		var rows []struct {
			ID          uuid.UUID `bun:"id"`
			StoryPoints *int      `bun:"story_points"`
		}
		if err := tx.NewSelect().Table("issues").Column("id", "story_points").Where("sprint_id = ?", id).
			OrderExpr("number").Scan(ctx, &rows); err != nil {
			return fmt.Errorf("sprint %s issues: %w", id, err)
		}
		planned := 0
		ids := make([]uuid.UUID, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
			if r.StoryPoints != nil {
				planned += *r.StoryPoints
			}
		}
		sp.Status, sp.PlannedPoints = StatusActive, &planned
		if sp.StartDate == nil {
			today := s.today()
			sp.StartDate = &today
		}
		if _, err := tx.NewUpdate().Model(sp).Column("status", "start_date", "planned_points").WherePK().Exec(ctx); err != nil {
			if store.IsUnique(err, oneActiveIndex) {
				return ErrAlreadyActive
			}
			return fmt.Errorf("start sprint %s: %w", id, err)
		}
		out = sp
		return s.bus.Emit(ctx, tx, Started{Subject: subject(p, sp), By: by(actor), IssueIDs: ids, At: s.now().UTC()})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Completion is the result of Complete.
type Completion struct {
	Sprint              *store.Sprint
	MovedToBacklogCount int
}

// Complete closes an ACTIVE sprint: its issues whose status category is not DONE go
// back to the backlog (each with the SPRINT_CHANGED activity and sprint field change an
// issue update writes), completedPoints becomes the sum of the DONE issues' points (null
// counts 0), and sprint.Completed is published, all in one transaction. The issues are
// locked first so a concurrent issue update cannot slip one into or out of the count.
func (s *Service) Complete(ctx context.Context, p issue.Project, actor issue.Actor, id uuid.UUID) (*Completion, error) {
	var out *Completion
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		sp, err := load(ctx, tx, p.ID, id, true)
		if err != nil {
			return err
		}
		if sp.Status != StatusActive {
			return fmt.Errorf("%w: complete a %s sprint", ErrState, sp.Status)
		}
		var rows []struct {
			ID          uuid.UUID `bun:"id"`
			Key         string    `bun:"key"`
			Title       string    `bun:"title"`
			StoryPoints *int      `bun:"story_points"`
			Category    string    `bun:"category"`
		}
		err = tx.NewSelect().TableExpr("issues AS i").ColumnExpr("i.id, i.key, i.title, i.story_points, s.category").
			Join("JOIN workflow_statuses AS s ON s.id = i.status_id").
			Where("i.sprint_id = ?", id).OrderExpr("i.number").For("UPDATE OF i").Scan(ctx, &rows)
		if err != nil {
			return fmt.Errorf("sprint %s issues: %w", id, err)
		}
		at := s.now().UTC()
		issueBy := issue.By{ID: &actor.UserID, Email: actor.Email, IP: actor.IP, UserAgent: actor.UserAgent}
		completed := 0
		all := make([]uuid.UUID, len(rows))
		var moved []uuid.UUID
		var acts []store.IssueActivity
		var events []event.Event
		for i, r := range rows {
			all[i] = r.ID
			if r.Category == "DONE" {
				if r.StoryPoints != nil {
					completed += *r.StoryPoints
				}
				continue
			}
			moved = append(moved, r.ID)
			acts = append(acts, store.IssueActivity{IssueID: r.ID, ActorID: actor.UserID, Type: "SPRINT_CHANGED", OldValue: &sp.Name})
			events = append(events, issue.FieldChanged{
				Subject: issue.Subject{ProjectID: p.ID, ProjectKey: p.Key, IssueID: r.ID, IssueKey: r.Key, Title: r.Title},
				By:      issueBy, Field: issue.FieldSprint, OldValue: sp.Name, OldRaw: sp.ID.String(), At: at})
		}
		if len(moved) > 0 {
			if _, err := tx.NewUpdate().Table("issues").Set("sprint_id = NULL, updated_at = clock_timestamp()").
				Where("id IN (?)", bun.In(moved)).Exec(ctx); err != nil {
				return fmt.Errorf("move sprint %s issues to the backlog: %w", id, err)
			}
			if _, err := tx.NewInsert().Model(&acts).Exec(ctx); err != nil {
				return fmt.Errorf("insert activity: %w", err)
			}
		}
		sp.Status, sp.CompletedPoints = StatusClosed, &completed
		if _, err := tx.NewUpdate().Model(sp).Column("status", "completed_points").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("complete sprint %s: %w", id, err)
		}
		out = &Completion{Sprint: sp, MovedToBacklogCount: len(moved)}
		events = append(events, Completed{Subject: subject(p, sp), By: by(actor), MovedToBacklogCount: len(moved),
			IssueIDs: all, At: at})
		return s.bus.Emit(ctx, tx, events...)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func subject(p issue.Project, sp *store.Sprint) Subject {
	return Subject{ProjectID: p.ID, ProjectKey: p.Key, SprintID: sp.ID, SprintName: sp.Name}
}

func by(a issue.Actor) By {
	id := a.UserID
	return By{ID: &id, Email: a.Email, IP: a.IP, UserAgent: a.UserAgent}
}
