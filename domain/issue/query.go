package issue

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// selectView selects issues (alias i) with the names a response shows, in one query:
// status, reporter, assignee and sprint are joined, never looked up per row.
func selectView(db bun.IDB, dst any) *bun.SelectQuery {
	return db.NewSelect().Model(dst).
		ColumnExpr("i.*").
		ColumnExpr("s.name AS status_name, s.category AS status_category").
		ColumnExpr("a.display_name AS assignee_name, r.display_name AS reporter_name, sp.name AS sprint_name").
		Join("JOIN workflow_statuses AS s ON s.id = i.status_id").
		Join("JOIN users AS r ON r.id = i.reporter_id").
		Join("LEFT JOIN users AS a ON a.id = i.assignee_id").
		Join("LEFT JOIN sprints AS sp ON sp.id = i.sprint_id")
}

// loadView reads one issue of p by ref; lock takes the issue row's lock (FOR UPDATE),
// so concurrent changes of one issue serialize.
func loadView(ctx context.Context, db bun.IDB, p Project, ref Ref, lock bool) (*View, error) {
	v := &View{ProjectKey: p.Key}
	q := ref.where(selectView(db, v), p)
	if lock {
		q = q.For("UPDATE OF i")
	}
	if err := q.Scan(ctx); err != nil {
		if store.Translate(err) == store.ErrNotFound {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("load issue: %w", err)
	}
	return v, nil
}

// Get returns one issue with its labels and versions.
func (s *Service) Get(ctx context.Context, p Project, ref Ref) (*View, error) {
	v, err := loadView(ctx, s.db, p, ref, false)
	if err != nil {
		return nil, err
	}
	if err := fillLabels(ctx, s.db, []*View{v}); err != nil {
		return nil, err
	}
	if err := fillVersions(ctx, s.db, v); err != nil {
		return nil, err
	}
	return v, nil
}

// Sort orders of the list.
const (
	SortCreated = "createdAt"
	SortUpdated = "updatedAt"
)

// Filter narrows the list; every set member is one more AND condition.
type Filter struct {
	AssigneeMe       *uuid.UUID
	AssigneeID       *uuid.UUID
	Overdue          bool
	LabelID          *uuid.UUID
	FixVersionID     *uuid.UUID
	AffectsVersionID *uuid.UUID
	StatusID         *uuid.UUID
	SprintID         *uuid.UUID
	ParentID         *uuid.UUID
	Type             string
	Priority         string
	Backlog          bool
	// Q is a case-insensitive substring of title or description.
	Q string
	// Sort is SortCreated (key number ascending, the default) or SortUpdated (newest
	// change first); without an explicit sort, Overdue orders by due date ascending.
	Sort string
}

// likeEscaper makes user text literal inside an ILIKE pattern.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// filtered reports whether any filter is set (the sort is not a filter).
func (f Filter) filtered() bool {
	f.Sort = ""
	return f != Filter{}
}

// where adds f's conditions to q (issues aliased i, statuses s); today is the date
// overdue compares with.
func (f Filter) where(q *bun.SelectQuery, today time.Time) *bun.SelectQuery {
	if f.AssigneeMe != nil {
		q = q.Where("i.assignee_id = ?", *f.AssigneeMe)
	}
	if f.AssigneeID != nil {
		q = q.Where("i.assignee_id = ?", *f.AssigneeID)
	}
	if f.Overdue {
		q = q.Where("i.due_date < ?", today.Format(time.DateOnly)).Where("s.category <> 'DONE'")
	}
	if f.LabelID != nil {
		q = q.Where("EXISTS (SELECT 1 FROM issue_labels AS il WHERE il.issue_id = i.id AND il.label_id = ?)", *f.LabelID)
	}
	if f.FixVersionID != nil {
		q = q.Where("EXISTS (SELECT 1 FROM issue_versions AS iv WHERE iv.issue_id = i.id AND iv.version_id = ? AND iv.type = 'FIX')", *f.FixVersionID)
	}
	if f.AffectsVersionID != nil {
		q = q.Where("EXISTS (SELECT 1 FROM issue_versions AS iv WHERE iv.issue_id = i.id AND iv.version_id = ? AND iv.type = 'AFFECTS')", *f.AffectsVersionID)
	}
	if f.StatusID != nil {
		q = q.Where("i.status_id = ?", *f.StatusID)
	}
	if f.SprintID != nil {
		q = q.Where("i.sprint_id = ?", *f.SprintID)
	}
	if f.ParentID != nil {
		q = q.Where("i.parent_id = ?", *f.ParentID)
	}
	if f.Type != "" {
		q = q.Where("i.type = ?", f.Type)
	}
	if f.Priority != "" {
		q = q.Where("i.priority = ?", f.Priority)
	}
	if f.Backlog {
		q = q.Where("i.sprint_id IS NULL")
	}
	if f.Q != "" {
		pattern := "%" + likeEscaper.Replace(f.Q) + "%"
		q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("i.title ILIKE ?", pattern).WhereOr("i.description ILIKE ?", pattern)
		})
	}
	return q
}

// order adds the list order: key number, last change first, or due date for overdue.
func (f Filter) order(q *bun.SelectQuery) *bun.SelectQuery {
	switch {
	case f.Sort == SortUpdated:
		q = q.OrderExpr("i.updated_at DESC, i.number DESC")
	case f.Overdue && f.Sort == "":
		q = q.OrderExpr("i.due_date ASC, i.number ASC")
	default:
		q = q.OrderExpr("i.number ASC")
	}
	return q
}

// List returns one page of p's issues matching f, with labels, and the total: two
// queries whatever the page holds (the page with its joins and its total, then the
// labels of the page's issues). Unfiltered, the total is the project's kept issue
// count; filtered, a count of the matches runs inside the page query.
func (s *Service) List(ctx context.Context, p Project, f Filter, offset, limit int) ([]*View, int, error) {
	today := s.now().UTC()
	var rows []struct {
		View  `bun:",extend"`
		Total int `bun:"total"`
	}
	q := selectView(s.db, &rows).ColumnExpr("(?) AS total", s.total(p, f, today)).Where("i.project_id = ?", p.ID)
	q = f.order(f.where(q, today)).Offset(int64(offset)).Limit(int64(limit))
	if err := q.Scan(ctx); err != nil {
		return nil, 0, fmt.Errorf("list issues: %w", err)
	}
	total := 0
	views := make([]*View, len(rows))
	for i := range rows {
		rows[i].ProjectKey = p.Key
		views[i] = &rows[i].View
		total = rows[i].Total
	}
	if len(rows) == 0 && offset > 0 {
		// Past the last page there is no row to carry the total.
		if err := s.db.NewSelect().ColumnExpr("(?)", s.total(p, f, today)).Scan(ctx, &total); err != nil {
			return nil, 0, fmt.Errorf("count issues: %w", err)
		}
	}
	if err := fillLabels(ctx, s.db, views); err != nil {
		return nil, 0, err
	}
	return views, total, nil
}

// total is the scalar subquery counting p's issues that match f. Inside it the alias i
// names its own issues row, so the filters apply unchanged.
func (s *Service) total(p Project, f Filter, today time.Time) *bun.SelectQuery {
	if !f.filtered() {
		return s.db.NewSelect().Table("issue_counts").ColumnExpr("coalesce(max(issues), 0)").Where("project_id = ?", p.ID)
	}
	q := s.db.NewSelect().Model((*store.Issue)(nil)).ColumnExpr("count(*)").Where("i.project_id = ?", p.ID)
	if f.Overdue {
		q = q.Join("JOIN workflow_statuses AS s ON s.id = i.status_id")
	}
	return f.where(q, today)
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
