package issue

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/store"
)

// Delete removes an issue with its SUBTASK children; its other children (a story under
// an epic, say) stay and lose their parent (the foreign key sets it null). Labels,
// version assignments and activity go by cascade. Deleted is published for every
// removed issue.
func (s *Service) Delete(ctx context.Context, p Project, actor Actor, ref Ref) error {
	return s.inTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		cur, err := loadView(ctx, tx, p, ref, true)
		if err != nil {
			return err
		}
		var gone []store.Issue
		err = tx.NewRaw(`DELETE FROM issues WHERE project_id = ? AND (id = ? OR (parent_id = ? AND type = ?))
			RETURNING id, key, title`, p.ID, cur.ID, cur.ID, TypeSubtask).Scan(ctx, &gone)
		if err != nil {
			return fmt.Errorf("delete issue: %w", err)
		}
		at := s.now().UTC()
		events := make([]event.Event, 0, len(gone))
		for _, g := range gone {
			events = append(events, Deleted{Subject: Subject{ProjectID: p.ID, ProjectKey: p.Key, IssueID: g.ID, IssueKey: g.Key, Title: g.Title},
				By: byActor(actor), At: at})
		}
		return s.bus.Emit(ctx, tx, events...)
	})
}
