package comment

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/issue"
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
		if author != nil {
			authorID = &author.UserID
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
		return recordCreated(ctx, tx, s.bus, authorID, time.Time{}, Created{Subject: iss, By: byActor(author),
			CommentID: out.ID, Body: clean, At: out.CreatedAt.UTC(), Automated: s.automated})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
