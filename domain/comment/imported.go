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
	act := store.IssueActivity{IssueID: iss.IssueID, ActorID: author, Type: ActivityComment, CommentID: &id,
		NewValue: excerpt(sanitized), CreatedAt: at}
	if _, err := tx.NewInsert().Model(&act).Exec(ctx); err != nil {
		return fmt.Errorf("insert comment activity: %w", err)
	}
	mentioned, err := ResolveMentions(ctx, tx, iss.ProjectID, author, sanitized)
	if err != nil {
		return err
	}
	return bus.Emit(ctx, tx, Created{Subject: iss, By: by, CommentID: id, Body: sanitized, Mentioned: mentioned, At: at.UTC()})
}
