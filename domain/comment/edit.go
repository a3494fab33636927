package comment

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// lockComment reads a live (not deleted) comment of the issue ref names in p under its
// row lock, so an edit and a delete of one comment serialize. A comment of another
// issue or project, or a deleted one, is ErrNotFound; an unknown issue is
// issue.ErrNotFound.
func lockComment(ctx context.Context, tx bun.Tx, p issue.Project, ref issue.Ref, id uuid.UUID) (issue.Subject, *store.Comment, error) {
	iss, err := issue.LoadSubject(ctx, tx, p, ref, false)
	if err != nil {
		return iss, nil, err
	}
	c := &store.Comment{}
	err = tx.NewSelect().Model(c).Where("id = ? AND issue_id = ? AND deleted_at IS NULL", id, iss.IssueID).For("UPDATE").Scan(ctx)
	if err != nil {
		if store.IsNotFound(err) {
			return iss, nil, ErrNotFound
		}
		return iss, nil, fmt.Errorf("load comment: %w", err)
	}
	return iss, c, nil
}

// Edit replaces the body of a comment by its author and sets editedAt. The COMMENT
// activity entry's excerpt follows the new text, so text removed by an edit does not live
// on in the feed. No event is published (docs/design.md#event-flow); the audit log
// records COMMENT_UPDATED when its level is on.
func (s *Service) Edit(ctx context.Context, p issue.Project, actor issue.Actor, ref issue.Ref, id uuid.UUID, body string) (*View, error) {
	clean := Sanitize(body)
	if clean == "" {
		return nil, ErrEmpty
	}
	var out *View
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		iss, c, err := lockComment(ctx, tx, p, ref, id)
		if err != nil {
			return err
		}
		if c.AuthorID == nil || *c.AuthorID != actor.UserID {
			return ErrNotAuthor
		}
		out = &View{}
		err = tx.NewRaw(`WITH c AS (UPDATE comments SET body = ?, edited_at = t.at, updated_at = t.at
				FROM clock_timestamp() AS t(at) WHERE id = ? RETURNING comments.*)
			SELECT `+viewColumns+` FROM c LEFT JOIN users AS u ON u.id = c.author_id`, clean, id).Scan(ctx, out)
		if err != nil {
			return fmt.Errorf("update comment: %w", err)
		}
		if _, err := tx.NewUpdate().Table("issue_activities").Set("new_value = ?", excerpt(clean)).
			Where("issue_id = ? AND comment_id = ? AND type = ?", iss.IssueID, id, ActivityComment).Exec(ctx); err != nil {
			return fmt.Errorf("update comment activity: %w", err)
		}
		return s.record(ctx, tx, AuditEdited, p, actor, iss, id)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete soft-deletes a comment: its author or a project admin (admin: the caller's
// effective project role is ADMIN) may. The row stays with deleted_at set and leaves
// every list; its COMMENT activity entry stays as the record that a comment was made, but
// loses its commentId and excerpt
// (docs/api-conventions.md#comments-activity-and-attachments), so the deleted text is
// shown nowhere. A second delete is ErrNotFound.
func (s *Service) Delete(ctx context.Context, p issue.Project, actor issue.Actor, admin bool, ref issue.Ref, id uuid.UUID) error {
	return store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		iss, c, err := lockComment(ctx, tx, p, ref, id)
		if err != nil {
			return err
		}
		if !admin && (c.AuthorID == nil || *c.AuthorID != actor.UserID) {
			return ErrNotAuthorOrAdmin
		}
		if _, err := tx.NewRaw(`UPDATE comments SET deleted_at = t.at, updated_at = t.at FROM clock_timestamp() AS t(at)
			WHERE id = ?`, id).Exec(ctx); err != nil {
			return fmt.Errorf("delete comment: %w", err)
		}
		if _, err := tx.NewUpdate().Table("issue_activities").Set("comment_id = NULL, new_value = NULL").
			Where("issue_id = ? AND comment_id = ?", iss.IssueID, id).Exec(ctx); err != nil {
			return fmt.Errorf("clear comment activity: %w", err)
		}
		return s.record(ctx, tx, AuditDeleted, p, actor, iss, id)
	})
}

// record enqueues the audit job of an edit or a deletion (WRITE level: nothing when
// that level is off).
func (s *Service) record(ctx context.Context, tx bun.Tx, action string, p issue.Project, actor issue.Actor, iss issue.Subject, id uuid.UUID) error {
	if s.audit == nil {
		return nil
	}
	e := actor.Entry(action, "COMMENT", id.String(), "")
	e.ProjectID = &p.ID
	params, err := s.audit.EventJobs(ctx, tx, e, auditDetails(iss.IssueKey, iss.IssueID))
	if err != nil {
		return err
	}
	return s.bus.Enqueue(ctx, tx, params...)
}

// auditDetails names the comment's issue in an audit row.
func auditDetails(issueKey string, issueID uuid.UUID) map[string]any {
	return map[string]any{"issueKey": issueKey, "issueId": issueID}
}
