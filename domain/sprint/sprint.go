package sprint

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// Sprint states.
const (
	StatusPlanned = "PLANNED"
	StatusActive  = "ACTIVE"
	StatusClosed  = "CLOSED"
)

// MaxName bounds a sprint name, as the column does.
const MaxName = 255

// Errors of the sprint rules; api/ maps each to its status
// (docs/api-conventions.md#errors).
var (
	ErrNotFound         = errors.New("sprint: not found")
	ErrNotInProject     = errors.New("sprint: belongs to another project")
	ErrAlreadyActive    = errors.New("sprint: another sprint is active")
	ErrState            = errors.New("sprint: the sprint's state does not allow this")
	ErrIssueNotInSprint = errors.New("sprint: the issue is not in this sprint")
	// ErrDateOrder is an end date before the start date once a change is applied to the
	// stored dates (the edge checks a request's own pair).
	ErrDateOrder = errors.New("sprint: end date before start date")
)

// oneActiveIndex is the partial unique index of migration 0002 that keeps a project at
// one ACTIVE sprint whatever the concurrency.
const oneActiveIndex = "sprints_one_active"

// NewSprint is a validated create request.
type NewSprint struct {
	Name      string
	Goal      *string
	StartDate *time.Time
	EndDate   *time.Time
}

// Change is a validated partial update: nil leaves a field unchanged.
type Change struct {
	Name      *string
	Goal      *string
	StartDate *time.Time
	EndDate   *time.Time
}

// Service runs the sprint rules on the database and publishes their events on the bus.
type Service struct {
	db     *bun.DB
	bus    *event.Bus
	issues *issue.Service
	now    func() time.Time
}

// NewService builds a Service; it holds no state of its own, so one per request is cheap.
func NewService(db *store.DB, bus *event.Bus) *Service {
	return &Service{db: db.Bun, bus: bus, issues: issue.NewService(db, bus), now: time.Now}
}

// today is the current date in UTC, the calendar sprints are dated in.
func (s *Service) today() time.Time {
	y, m, d := s.now().UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// List returns the project's sprints in creation order.
func (s *Service) List(ctx context.Context, projectID uuid.UUID) ([]store.Sprint, error) {
	out := []store.Sprint{}
	err := s.db.NewSelect().Model(&out).Where("sp.project_id = ?", projectID).OrderExpr("sp.created_at, sp.id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sprints: %w", err)
	}
	return out, nil
}

// Create adds a PLANNED sprint to the project.
func (s *Service) Create(ctx context.Context, projectID uuid.UUID, in NewSprint) (*store.Sprint, error) {
	if in.StartDate != nil && in.EndDate != nil && in.EndDate.Before(*in.StartDate) {
		return nil, ErrDateOrder
	}
	sp := &store.Sprint{ProjectID: projectID, Name: in.Name, Goal: in.Goal, Status: StatusPlanned,
		StartDate: in.StartDate, EndDate: in.EndDate}
	if _, err := s.db.NewInsert().Model(sp).Returning("*").Exec(ctx); err != nil {
		return nil, fmt.Errorf("create sprint: %w", err)
	}
	return sp, nil
}

// Get returns one sprint of the project.
func (s *Service) Get(ctx context.Context, projectID, id uuid.UUID) (*store.Sprint, error) {
	return load(ctx, s.db, projectID, id, false)
}

// load reads a sprint and checks it belongs to the project: an unknown id is ErrNotFound,
// a sprint of another project ErrNotInProject (403, not 404:
// docs/api-conventions.md#roles). lock takes the row lock, so state changes of one sprint
// serialize.
func load(ctx context.Context, db bun.IDB, projectID, id uuid.UUID, lock bool) (*store.Sprint, error) {
	sp := &store.Sprint{}
	q := db.NewSelect().Model(sp).Where("sp.id = ?", id)
	if lock {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		if store.IsNotFound(err) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("load sprint %s: %w", id, err)
	}
	if sp.ProjectID != projectID {
		return nil, ErrNotInProject
	}
	return sp, nil
}

// Update applies a partial update. Dates may change only while the sprint is PLANNED;
// the resulting pair must keep the end on or after the start.
func (s *Service) Update(ctx context.Context, projectID, id uuid.UUID, in Change) (*store.Sprint, error) {
	var out *store.Sprint
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		sp, err := load(ctx, tx, projectID, id, true)
		if err != nil {
			return err
		}
		if (in.StartDate != nil || in.EndDate != nil) && sp.Status != StatusPlanned {
			return fmt.Errorf("%w: dates of a %s sprint", ErrState, sp.Status)
		}
		if in.Name != nil {
			sp.Name = *in.Name
		}
		if in.Goal != nil {
			sp.Goal = in.Goal
		}
		if in.StartDate != nil {
			sp.StartDate = in.StartDate
		}
		if in.EndDate != nil {
			sp.EndDate = in.EndDate
		}
		if sp.StartDate != nil && sp.EndDate != nil && sp.EndDate.Before(*sp.StartDate) {
			return ErrDateOrder
		}
		if _, err := tx.NewUpdate().Model(sp).Column("name", "goal", "start_date", "end_date").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("update sprint %s: %w", id, err)
		}
		out = sp
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
