package comment

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// MaxBody is the longest comment body accepted, in characters, before sanitizing
// (docs/api-conventions.md#limits).
const MaxBody = 50000

// Audit actions of comment changes (WRITE level). COMMENT_CREATED comes from the Created
// event; edits and deletions have no event (docs/design.md#event-flow), so they are
// recorded directly in their transaction.
const (
	AuditCreated = "COMMENT_CREATED"
	AuditEdited  = "COMMENT_UPDATED"
	AuditDeleted = "COMMENT_DELETED"
)

// ActivityComment is the issue activity type written for every comment by a user.
const ActivityComment = "COMMENT"

// Errors of the comment rules; api/ maps each to its status (docs/api-conventions.md#errors).
var (
	ErrNotFound = errors.New("comment: not found")
	// ErrNotAuthor: only the author edits a comment.
	ErrNotAuthor = errors.New("comment: only the author may edit it")
	// ErrNotAuthorOrAdmin: only the author or a project admin deletes a comment.
	ErrNotAuthorOrAdmin = errors.New("comment: only the author or a project admin may delete it")
	// ErrEmpty: nothing is left of the body once unsafe markup is removed.
	ErrEmpty = errors.New("comment: body is empty after sanitizing")
)

// View is a comment as the API shows it, with its author's display name.
type View struct {
	store.Comment `bun:",extend"`

	// AuthorName is nil for a system comment.
	AuthorName *string `bun:"author_name"`
}

// Activity is one entry of an issue's activity feed with its actor's display name.
type Activity struct {
	store.IssueActivity `bun:",extend"`

	ActorName string `bun:"actor_name"`
	// RuleName is the name of the automation rule that made the change (RuleID), nil
	// for a person's change or once the rule is deleted.
	RuleName *string `bun:"rule_name"`
}

// Service runs the comment rules on the database and publishes their events on the bus.
type Service struct {
	db    *bun.DB
	bus   *event.Bus
	audit *audit.Recorder
	now   func() time.Time
	// tx, when set (ForAutomation), is the caller's transaction comments are created in.
	tx *bun.Tx
	// automated marks the Created events of an automation rule's comments.
	automated bool
}

// NewService builds a Service; it holds no state of its own, so building one per
// request costs nothing.
func NewService(db *store.DB, bus *event.Bus, rec *audit.Recorder) *Service {
	return &Service{db: db.Bun, bus: bus, audit: rec, now: time.Now}
}

// ForAutomation returns a Service that creates comments inside tx, an automation rule's
// transaction, and marks their Created events Automated: they reach audit, webhooks and
// notifications as any comment does, but trigger no COMMENT_ADDED rule.
func (s *Service) ForAutomation(tx bun.Tx) *Service {
	c := *s
	c.tx, c.automated = &tx, true
	return &c
}

// inTx runs fn in the caller's transaction (ForAutomation), else in a new one.
func (s *Service) inTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	if s.tx != nil {
		return fn(ctx, *s.tx)
	}
	return store.InTx(ctx, s.db, fn)
}

// viewColumns are the columns of a View, on comments aliased c and their author u.
const viewColumns = `c.id, c.issue_id, c.author_id, c.body, c.edited_at, c.deleted_at, c.created_at, c.updated_at,
	c.rule_id, u.display_name AS author_name`

func byActor(a *issue.Actor) issue.By {
	if a == nil {
		return issue.By{}
	}
	id := a.UserID
	return issue.By{ID: &id, Email: a.Email, IP: a.IP, UserAgent: a.UserAgent}
}
