package issue

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/store"
)

// viewColumns are the issue row's columns a View holds: named, since the row also
// carries the list's copy of its custom field values (custom_packed, custom_terms),
// which no View reads.
const viewColumns = `i.id, i.project_id, i.number, i.key, i.title, i.description, i.type, i.priority,
	i.story_points, i.status_id, i.assignee_id, i.reporter_id, i.parent_id, i.due_date, i.sprint_id,
	i.sla_start_time, i.created_at, i.updated_at`

// selectView selects issues (alias i) with the names a response shows, in one query:
// status, reporter, assignee and sprint are joined, never looked up per row.
func selectView(db bun.IDB, dst any) *bun.SelectQuery {
	return db.NewSelect().Model(dst).
		ColumnExpr(viewColumns).
		ColumnExpr("s.name AS status_name, s.category AS status_category").
		ColumnExpr("a.display_name AS assignee_name, r.display_name AS reporter_name, sp.name AS sprint_name").
		Join("JOIN workflow_statuses AS s ON s.id = i.status_id").
		Join("JOIN users AS r ON r.id = i.reporter_id").
		Join("LEFT JOIN users AS a ON a.id = i.assignee_id").
		Join("LEFT JOIN sprints AS sp ON sp.id = i.sprint_id")
}

// loadView reads one issue of p by ref; lock takes the issue row's lock (FOR UPDATE),
// so concurrent changes of one issue serialize.
//
// The lock is taken on the issue row alone, by a statement of its own, and the view is
// read after it. Locking in the joined read (FOR UPDATE OF i) lost the row: when a
// concurrent change of the issue commits while the read waits for its lock, Postgres
// re-checks the locked row's new version against the join with the status row it
// found before (READ COMMITTED), and a changed status no longer matched, so a
// contended move answered 404 for an issue that existed. After the lock the read
// takes a new snapshot, which sees the change it waited for.
func loadView(ctx context.Context, db bun.IDB, p Project, ref Ref, lock bool) (*View, error) {
	if lock {
		var id uuid.UUID
		err := ref.where(db.NewSelect().TableExpr("issues AS i").Column("i.id"), p).For("UPDATE").Scan(ctx, &id)
		if err != nil {
			if store.Translate(err) == store.ErrNotFound {
				return nil, ErrNotFound
			}
			return nil, fmt.Errorf("lock issue: %w", err)
		}
		ref = Ref{ID: id}
	}
	v := &View{ProjectKey: p.Key}
	if err := ref.where(selectView(db, v), p).Scan(ctx); err != nil {
		if store.Translate(err) == store.ErrNotFound {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("load issue: %w", err)
	}
	return v, nil
}

// Get returns one issue with its labels, versions and custom fields, and whether the
// read is to be recorded (View.ViewAudited).
func (s *Service) Get(ctx context.Context, p Project, ref Ref) (*View, error) {
	v := &View{ProjectKey: p.Key}
	err := ref.where(selectView(s.db, v), p).
		ColumnExpr("coalesce((SELECT enabled FROM audit_config WHERE level = ?), false) AS view_audited", string(audit.LevelAll)).
		Scan(ctx)
	if err != nil {
		if store.Translate(err) == store.ErrNotFound {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("load issue: %w", err)
	}
	if err := fillLabels(ctx, s.db, []*View{v}); err != nil {
		return nil, err
	}
	if err := fillVersions(ctx, s.db, v); err != nil {
		return nil, err
	}
	if err := fillCustomFields(ctx, s.db, p, v); err != nil {
		return nil, err
	}
	return v, nil
}

// fillLabels loads the labels of every view in one query (by name).
func fillLabels(ctx context.Context, db bun.IDB, views []*View) error {
	if len(views) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(views))
	byID := make(map[uuid.UUID]*View, len(views))
	for i, v := range views {
		ids[i] = v.ID
		byID[v.ID] = v
		v.Labels = []LabelRef{}
	}
	var rows []struct {
		IssueID uuid.UUID `bun:"issue_id"`
		LabelRef
	}
	err := db.NewSelect().TableExpr("issue_labels AS il").
		ColumnExpr("il.issue_id, l.id, l.name, l.color").
		Join("JOIN labels AS l ON l.id = il.label_id").
		Where("il.issue_id IN (?)", bun.In(ids)).
		OrderExpr("l.name, l.id").
		Scan(ctx, &rows)
	if err != nil {
		return fmt.Errorf("load labels: %w", err)
	}
	for _, r := range rows {
		v := byID[r.IssueID]
		v.Labels = append(v.Labels, r.LabelRef)
	}
	return nil
}

// fillVersions loads the fix and affects versions of one issue (by name).
func fillVersions(ctx context.Context, db bun.IDB, v *View) error {
	var rows []struct {
		Type string `bun:"type"`
		VersionRef
	}
	err := db.NewSelect().TableExpr("issue_versions AS iv").
		ColumnExpr("iv.type, ver.id, ver.name").
		Join("JOIN versions AS ver ON ver.id = iv.version_id").
		Where("iv.issue_id = ?", v.ID).
		OrderExpr("ver.name, ver.id").
		Scan(ctx, &rows)
	if err != nil {
		return fmt.Errorf("load versions: %w", err)
	}
	v.FixVersions, v.AffectsVersions = []VersionRef{}, []VersionRef{}
	for _, r := range rows {
		if r.Type == VersionFix {
			v.FixVersions = append(v.FixVersions, r.VersionRef)
		} else {
			v.AffectsVersions = append(v.AffectsVersions, r.VersionRef)
		}
	}
	return nil
}
