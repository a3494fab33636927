package issue

import (
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/store"
)

// Service runs the issue rules on the database and publishes their events on the bus.
type Service struct {
	db   *bun.DB
	pool *pgxpool.Pool
	bus  *event.Bus
	now  func() time.Time
}

// NewService builds a Service. It holds no state of its own, so building one per request
// costs nothing.
func NewService(db *store.DB, bus *event.Bus) *Service {
	return &Service{db: db.Bun, pool: db.Pool, bus: bus, now: time.Now}
}

// Ref names an issue in a path: its UUID, or its key (ABC-12).
type Ref struct {
	ID  uuid.UUID
	Key string
}

var keyPattern = regexp.MustCompile(`^[A-Za-z0-9]{2,10}-[0-9]{1,9}$`)

// ParseRef reads a path segment as a UUID or an issue key (case-insensitive); ok is
// false when it is neither.
func ParseRef(s string) (Ref, bool) {
	if id, err := uuid.Parse(s); err == nil && len(s) == 36 {
		return Ref{ID: id}, true
	}
	if keyPattern.MatchString(s) {
		return Ref{Key: strings.ToUpper(s)}, true
	}
	return Ref{}, false
}

// where adds the condition selecting ref inside project p to q (issues aliased i).
func (r Ref) where(q *bun.SelectQuery, p Project) *bun.SelectQuery {
	q = q.Where("i.project_id = ?", p.ID)
	if r.Key != "" {
		return q.Where("i.key = ?", r.Key)
	}
	return q.Where("i.id = ?", r.ID)
}
