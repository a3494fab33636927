package issue

import (
	"context"
	"fmt"
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
	// tx, when set (WithTx), is the caller's transaction every change runs in.
	tx *bun.Tx
	// matches, when set (WithMatches), keeps filtered lists' matches between reads.
	matches *Matches
}

// NewService builds a Service. It holds no state of its own, so building one per request
// costs nothing.
func NewService(db *store.DB, bus *event.Bus) *Service {
	return &Service{db: db.Bun, pool: db.Pool, bus: bus, now: time.Now}
}

// WithMatches returns a Service whose lists keep their matches in m (Matches) and
// read them from it while they are current.
func (s *Service) WithMatches(m *Matches) *Service {
	c := *s
	c.matches = m
	return &c
}

// WithTx returns a Service whose changes run inside tx, the caller's transaction,
// instead of one of their own: an automation rule's actions commit (or roll back) with
// the rule's execution row.
func (s *Service) WithTx(tx bun.Tx) *Service {
	c := *s
	c.tx = &tx
	return &c
}

// inTx runs fn in the caller's transaction (WithTx), else in a new one.
func (s *Service) inTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	if s.tx != nil {
		return fn(ctx, *s.tx)
	}
	return store.InTx(ctx, s.db, fn)
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
	cond, value := r.Condition()
	return q.Where("i.project_id = ?", p.ID).Where(cond, value)
}

// Condition is the SQL condition selecting ref (issues aliased i) and its one
// argument, for statements of other packages that find the issue of a path themselves;
// combine it with i.project_id, since a key or id alone may name another project's issue.
func (r Ref) Condition() (string, any) {
	if r.Key != "" {
		return "i.key = ?", r.Key
	}
	return "i.id = ?", r.ID
}

// LoadSubject reads the issue ref names inside p as events name it, or ErrNotFound (an
// issue of another project is not found either). lock takes FOR KEY SHARE, which keeps
// the issue from being deleted until the transaction ends without blocking updates.
func LoadSubject(ctx context.Context, db bun.IDB, p Project, ref Ref, lock bool) (Subject, error) {
	subj := Subject{ProjectID: p.ID, ProjectKey: p.Key}
	q := ref.where(db.NewSelect().TableExpr("issues AS i").Column("i.id", "i.key", "i.title"), p)
	if lock {
		q = q.For("KEY SHARE OF i")
	}
	if err := q.Scan(ctx, &subj.IssueID, &subj.IssueKey, &subj.Title); err != nil {
		if store.IsNotFound(err) {
			return subj, ErrNotFound
		}
		return subj, fmt.Errorf("load issue: %w", err)
	}
	return subj, nil
}
