package comment

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// Both lists answer in one statement: the issue, the total and the page, each page row
// beside the issue through a LATERAL join. No row at all means no such issue; one row
// whose item columns are null is an empty page (past the end, say) with the total
// still right. Rows come newest first with the id as tie-breaker, so rows sharing a
// timestamp keep one order and paging neither repeats nor skips them; the partial
// index comments_issue and issue_activities_issue serve that order.

// pageHead are the per-statement columns of a list row.
type pageHead struct {
	FoundIssue uuid.UUID `bun:"found_issue"`
	Total      int       `bun:"total"`
}

// commentRow is a list row: the head and one comment, or none.
type commentRow struct {
	pageHead
	ID         *uuid.UUID `bun:"id"`
	IssueID    *uuid.UUID `bun:"issue_id"`
	AuthorID   *uuid.UUID `bun:"author_id"`
	Body       *string    `bun:"body"`
	EditedAt   *time.Time `bun:"edited_at"`
	CreatedAt  *time.Time `bun:"created_at"`
	UpdatedAt  *time.Time `bun:"updated_at"`
	RuleID     *uuid.UUID `bun:"rule_id"`
	AuthorName *string    `bun:"author_name"`
}

// List returns one page of the issue's live comments, newest first, and their total.
//
// after, in a cursor walk, is the last comment handed out: the page is the comments
// after it (older, or as old with a smaller id), found on the index, not skipped.
func (s *Service) List(ctx context.Context, p issue.Project, ref issue.Ref, after *store.After, offset, limit int) ([]View, int, error) {
	var rows []commentRow
	cond, value := ref.Condition()
	keyset, args := keysetAfter("c", after)
	q := s.db.NewRaw(`SELECT i.id AS found_issue, t.total, x.* FROM issues AS i
		CROSS JOIN LATERAL (SELECT count(*) AS total FROM comments AS c WHERE c.issue_id = i.id AND c.deleted_at IS NULL) AS t
		LEFT JOIN LATERAL (SELECT c.id, c.issue_id, c.author_id, c.body, c.edited_at, c.created_at, c.updated_at,
				c.rule_id, u.display_name AS author_name
			FROM comments AS c LEFT JOIN users AS u ON u.id = c.author_id
			WHERE c.issue_id = i.id AND c.deleted_at IS NULL`+keyset+`
			ORDER BY c.created_at DESC, c.id DESC LIMIT ? OFFSET ?) AS x ON true
		WHERE i.project_id = ? AND `+cond+`
		ORDER BY x.created_at DESC, x.id DESC`, append(args, limit, offset, p.ID, value)...)
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, 0, fmt.Errorf("list comments: %w", err)
	}
	if len(rows) == 0 {
		return nil, 0, issue.ErrNotFound
	}
	out := make([]View, 0, len(rows))
	for _, r := range rows {
		if r.ID == nil {
			continue
		}
		out = append(out, View{Comment: store.Comment{ID: *r.ID, IssueID: *r.IssueID, AuthorID: r.AuthorID, Body: *r.Body,
			EditedAt: r.EditedAt, CreatedAt: *r.CreatedAt, UpdatedAt: *r.UpdatedAt, RuleID: r.RuleID}, AuthorName: r.AuthorName})
	}
	return out, rows[0].Total, nil
}

// activityRow is a feed row: the head and one entry, or none.
type activityRow struct {
	pageHead
	ID        *uuid.UUID `bun:"id"`
	IssueID   *uuid.UUID `bun:"issue_id"`
	ActorID   *uuid.UUID `bun:"actor_id"`
	Type      *string    `bun:"type"`
	CommentID *uuid.UUID `bun:"comment_id"`
	OldValue  *string    `bun:"old_value"`
	NewValue  *string    `bun:"new_value"`
	CreatedAt *time.Time `bun:"created_at"`
	ActorName *string    `bun:"actor_name"`
	RuleID    *uuid.UUID `bun:"rule_id"`
	CreatorID *uuid.UUID `bun:"rule_creator_id"`
	RuleName  *string    `bun:"rule_name"`
}

// Feed returns one page of the issue's activity, newest first, and its total: every
// type the issue rules, sprints, comments and attachments write.
func (s *Service) Feed(ctx context.Context, p issue.Project, ref issue.Ref, after *store.After, offset, limit int) ([]Activity, int, error) {
	var rows []activityRow
	cond, value := ref.Condition()
	keyset, args := keysetAfter("a", after)
	q := s.db.NewRaw(`SELECT i.id AS found_issue, t.total, x.* FROM issues AS i
		CROSS JOIN LATERAL (SELECT count(*) AS total FROM issue_activities AS a WHERE a.issue_id = i.id) AS t
		LEFT JOIN LATERAL (SELECT a.id, a.issue_id, a.actor_id, a.type, a.comment_id, a.old_value, a.new_value, a.created_at,
				u.display_name AS actor_name, a.rule_id, a.rule_creator_id, r.name AS rule_name
			FROM issue_activities AS a LEFT JOIN users AS u ON u.id = a.actor_id
			LEFT JOIN automation_rules AS r ON r.id = a.rule_id
			WHERE a.issue_id = i.id`+keyset+`
			ORDER BY a.created_at DESC, a.id DESC LIMIT ? OFFSET ?) AS x ON true
		WHERE i.project_id = ? AND `+cond+`
		ORDER BY x.created_at DESC, x.id DESC`, append(args, limit, offset, p.ID, value)...)
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, 0, fmt.Errorf("list activity: %w", err)
	}
	if len(rows) == 0 {
		return nil, 0, issue.ErrNotFound
	}
	out := make([]Activity, 0, len(rows))
	for _, r := range rows {
		if r.ID == nil {
			continue
		}
		a := Activity{IssueActivity: store.IssueActivity{ID: *r.ID, IssueID: *r.IssueID, ActorID: *r.ActorID, Type: *r.Type,
			CommentID: r.CommentID, OldValue: r.OldValue, NewValue: r.NewValue, CreatedAt: *r.CreatedAt,
			RuleID: r.RuleID, RuleCreatorID: r.CreatorID}, RuleName: r.RuleName}
		if r.ActorName != nil {
			a.ActorName = *r.ActorName
		}
		out = append(out, a)
	}
	return out, rows[0].Total, nil
}

// keysetAfter is the condition on alias t keeping the rows after after in the lists'
// order (created_at DESC, id DESC), and its arguments; none without a cursor.
func keysetAfter(t string, after *store.After) (string, []any) {
	if after == nil {
		return "", nil
	}
	return " AND (" + t + ".created_at, " + t + ".id) < (?, ?)", []any{after.Time, after.ID}
}
