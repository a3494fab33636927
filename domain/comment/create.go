package comment

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// Create adds a comment to the issue ref names in p. author nil makes a system
// comment (no author, no activity entry). The comment, its COMMENT activity entry and
// the jobs of its Created event (audit, webhooks, notifications) commit in one
// transaction; mentions are resolved before the event is published, so its consumers
// never parse the body again.
func (s *Service) Create(ctx context.Context, p issue.Project, author *issue.Actor, ref issue.Ref, body string) (*View, error) {
	clean := Sanitize(body)
	if clean == "" {
		return nil, ErrEmpty
	}
	var out *View
	err := s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		iss, err := issue.LoadSubject(ctx, tx, p, ref, false)
		if err != nil {
			return err
		}
		var authorID *uuid.UUID
		exclude := uuid.Nil
		if author != nil {
			id := author.UserID
			authorID, exclude = &id, id
		}
		out = &View{}
		// One clock reading for both timestamps, so a new comment's updatedAt equals its createdAt.
		err = tx.NewRaw(`WITH c AS (INSERT INTO comments (issue_id, author_id, body, created_at, updated_at)
				SELECT ?, ?, ?, t.at, t.at FROM clock_timestamp() AS t(at) RETURNING *)
			SELECT `+viewColumns+` FROM c LEFT JOIN users AS u ON u.id = c.author_id`,
			iss.IssueID, authorID, clean).Scan(ctx, out)
		if err != nil {
			return fmt.Errorf("insert comment: %w", err)
		}
		// Activity skips system comments (the entry's actor is required;
		// docs/api-conventions.md#comments-activity-and-attachments).
		if author != nil {
			act := store.IssueActivity{IssueID: iss.IssueID, ActorID: author.UserID, Type: ActivityComment, CommentID: &out.ID,
				NewValue: excerpt(clean)}
			if _, err := tx.NewInsert().Model(&act).Exec(ctx); err != nil {
				return fmt.Errorf("insert comment activity: %w", err)
			}
		}
		mentioned, err := ResolveMentions(ctx, tx, p.ID, exclude, clean)
		if err != nil {
			return err
		}
		return s.bus.Emit(ctx, tx, Created{Subject: iss, By: byActor(author), CommentID: out.ID, Body: clean,
			Mentioned: mentioned, At: out.CreatedAt.UTC(), Automated: s.automated})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
