package comment

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// Imported records, on tx, what Create records beside the row for comment id that an
// import inserted (docs/tasks.md#events): its COMMENT activity entry by its author, at
// its own time, and its Created event, published as the importer's (by) so audit,
// webhooks, notifications and automation see who imported it. sanitized is its body.
func Imported(ctx context.Context, tx bun.Tx, bus *event.Bus, iss issue.Subject, author uuid.UUID, by issue.By,
	id uuid.UUID, sanitized string, at time.Time) error {
	return recordCreated(ctx, tx, bus, &author, at, Created{Subject: iss, By: by, CommentID: id, Body: sanitized, At: at.UTC()})
}

// recordCreated writes, on tx, what a new comment brings beside its row: the COMMENT
// activity entry by author at activityAt (zero: now), none for a system comment (author
// nil: the entry's actor is required, docs/api-conventions.md#comments-activity-and-attachments),
// and e with the project members its body mentions (the author left out).
func recordCreated(ctx context.Context, tx bun.Tx, bus *event.Bus, author *uuid.UUID, activityAt time.Time, e Created) error {
	exclude := uuid.Nil
	if author != nil {
		exclude = *author
		act := store.IssueActivity{IssueID: e.Subject.IssueID, ActorID: *author, Type: ActivityComment, CommentID: &e.CommentID,
			NewValue: excerpt(e.Body), CreatedAt: activityAt}
		if _, err := tx.NewInsert().Model(&act).Exec(ctx); err != nil {
			return fmt.Errorf("insert comment activity: %w", err)
		}
	}
	mentioned, err := ResolveMentions(ctx, tx, e.Subject.ProjectID, exclude, e.Body)
	if err != nil {
		return err
	}
	e.Mentioned = mentioned
	return bus.Emit(ctx, tx, e)
}
