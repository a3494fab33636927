package comment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// MaxBody is the longest comment body accepted, in characters, before sanitizing
// (CONTRACT §7).
const MaxBody = 50000

// Audit actions of comment changes (WRITE level). COMMENT_CREATED comes from the
// Created event; edits and deletions have no event (SPEC names none), so they are
// recorded directly in their transaction.
const (
	AuditCreated = "COMMENT_CREATED"
	AuditEdited  = "COMMENT_UPDATED"
	AuditDeleted = "COMMENT_DELETED"
)

// ActivityComment is the issue activity type written for every comment by a user.
const ActivityComment = "COMMENT"

// Errors of the comment rules; api/ maps each to its CONTRACT status.
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
}

// Service runs the comment rules on the database and publishes their events on the bus.
type Service struct {
	db    *bun.DB
	bus   *event.Bus
	audit *audit.Recorder
	now   func() time.Time
}

// NewService builds a Service; it holds no state of its own, so building one per
// request costs nothing.
func NewService(db *store.DB, bus *event.Bus, rec *audit.Recorder) *Service {
	return &Service{db: db.Bun, bus: bus, audit: rec, now: time.Now}
}

// issueRow is what the comment rules need of the issue in the path.
type issueRow struct {
	ID    uuid.UUID `bun:"id"`
	Key   string    `bun:"key"`
	Title string    `bun:"title"`
}

func (r issueRow) subject(p issue.Project) issue.Subject {
	return issue.Subject{ProjectID: p.ID, ProjectKey: p.Key, IssueID: r.ID, IssueKey: r.Key, Title: r.Title}
}

// loadIssue reads the issue named by ref in project p, or issue.ErrNotFound: an issue
// of another project is not found, as an unknown one.
func loadIssue(ctx context.Context, db bun.IDB, p issue.Project, ref issue.Ref) (issueRow, error) {
	var row issueRow
	err := db.NewRaw("SELECT i.id, i.key, i.title FROM issues AS i WHERE "+refCondition(ref), p.ID, refValue(ref)).Scan(ctx, &row)
	if err != nil {
		if errors.Is(store.Translate(err), store.ErrNotFound) {
			return row, issue.ErrNotFound
		}
		return row, fmt.Errorf("load issue: %w", err)
	}
	return row, nil
}

// viewColumns are the columns of a View, on comments aliased c and their author u.
const viewColumns = `c.id, c.issue_id, c.author_id, c.body, c.edited_at, c.deleted_at, c.created_at, c.updated_at,
	u.display_name AS author_name`

func byActor(a *issue.Actor) issue.By {
	if a == nil {
		return issue.By{}
	}
	id := a.ID
	return issue.By{ID: &id, Email: a.Email, IP: a.IP, UserAgent: a.UserAgent}
}
