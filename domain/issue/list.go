package issue

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

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

// params collects positional arguments; the SQL text then depends only on which
// filters are set, so each shape is prepared once per connection and its plan reused.
// LIMIT and OFFSET are written as literals instead: with them as parameters Postgres
// never settles on a generic plan and plans this many-join query on every execution.
type params []any

func (ps *params) add(v any) string {
	*ps = append(*ps, v)
	return "$" + strconv.Itoa(len(*ps))
}

// where renders f's conditions on issues aliased i (statuses s); today is the date
// overdue compares with.
func (f Filter) where(ps *params, today time.Time) string {
	var c []string
	eq := func(column string, v *uuid.UUID) {
		if v != nil {
			c = append(c, column+" = "+ps.add(*v))
		}
	}
	eq("i.assignee_id", f.AssigneeMe)
	eq("i.assignee_id", f.AssigneeID)
	eq("i.status_id", f.StatusID)
	eq("i.sprint_id", f.SprintID)
	eq("i.parent_id", f.ParentID)
	if f.Overdue {
		c = append(c, "i.due_date < "+ps.add(today.Format(time.DateOnly))+"::date", "s.category <> 'DONE'")
	}
	if f.LabelID != nil {
		c = append(c, "EXISTS (SELECT 1 FROM issue_labels AS il WHERE il.issue_id = i.id AND il.label_id = "+ps.add(*f.LabelID)+")")
	}
	for _, v := range []struct {
		id   *uuid.UUID
		kind string
	}{{f.FixVersionID, VersionFix}, {f.AffectsVersionID, VersionAffects}} {
		if v.id != nil {
			c = append(c, "EXISTS (SELECT 1 FROM issue_versions AS iv WHERE iv.issue_id = i.id AND iv.version_id = "+ps.add(*v.id)+
				" AND iv.type = '"+v.kind+"')")
		}
	}
	if f.Type != "" {
		c = append(c, "i.type = "+ps.add(f.Type))
	}
	if f.Priority != "" {
		c = append(c, "i.priority = "+ps.add(f.Priority))
	}
	if f.Backlog {
		c = append(c, "i.sprint_id IS NULL")
	}
	if f.Q != "" {
		pattern := ps.add("%" + likeEscaper.Replace(f.Q) + "%")
		c = append(c, "(i.title ILIKE "+pattern+" OR i.description ILIKE "+pattern+")")
	}
	if len(c) == 0 {
		return ""
	}
	return " AND " + strings.Join(c, " AND ")
}

// order is the list order on the columns of alias t: key number, last change first, or
// due date for overdue.
func (f Filter) order(t string) string {
	switch {
	case f.Sort == SortUpdated:
		return t + ".updated_at DESC, " + t + ".number DESC"
	case f.Overdue && f.Sort == "":
		return t + ".due_date ASC, " + t + ".number ASC"
	}
	return t + ".number ASC"
}

// listColumns are the columns of one list row, in scan order (see scanListRow).
const listColumns = `p.id, p.project_id, p.number, p.key, p.title, p.description, p.type, p.priority, p.story_points,
	p.status_id, p.assignee_id, p.reporter_id, p.parent_id, p.due_date, p.sprint_id, p.sla_start_time, p.created_at,
	p.updated_at, p.status_name, p.status_category, p.assignee_name, p.reporter_name, p.sprint_name, p.total,
	lab.ids, lab.names, lab.colors`

// List returns one page of p's issues matching f, with labels, and the total, in one
// query whatever the page holds: the page with its joins, its total (the project's kept
// count unfiltered, a count of the matches otherwise) and, joined after the limit, the
// labels of its issues (the three arrays come from one scan, so they line up; they are
// sorted by name here, which is cheaper than three sorted aggregates per issue). It runs on pgx directly: this is the busiest read of the API,
// and typed binary scanning costs a fraction of reflection over database/sql.
func (s *Service) List(ctx context.Context, p Project, f Filter, offset, limit int) ([]*View, int, error) {
	today := s.now().UTC()
	var ps params
	project := ps.add(p.ID)
	where := f.where(&ps, today)
	total := "(SELECT coalesce(max(issues), 0) FROM issue_counts WHERE project_id = " + project + ")"
	if where != "" {
		join := ""
		if f.Overdue {
			join = " JOIN workflow_statuses AS s ON s.id = i.status_id"
		}
		total = "(SELECT count(*) FROM issues AS i" + join + " WHERE i.project_id = " + project + where + ")"
	}
	query := `SELECT ` + listColumns + `
FROM (
	SELECT i.*, s.name AS status_name, s.category AS status_category, a.display_name AS assignee_name,
		r.display_name AS reporter_name, sp.name AS sprint_name, ` + total + ` AS total
	FROM issues AS i
	JOIN workflow_statuses AS s ON s.id = i.status_id
	JOIN users AS r ON r.id = i.reporter_id
	LEFT JOIN users AS a ON a.id = i.assignee_id
	LEFT JOIN sprints AS sp ON sp.id = i.sprint_id
	WHERE i.project_id = ` + project + where + `
	ORDER BY ` + f.order("i") + `
	LIMIT ` + strconv.Itoa(limit) + ` OFFSET ` + strconv.Itoa(offset) + `
) AS p
LEFT JOIN LATERAL (
	SELECT array_agg(l.id) AS ids, array_agg(l.name) AS names, array_agg(l.color) AS colors
	FROM issue_labels AS il JOIN labels AS l ON l.id = il.label_id
	WHERE il.issue_id = p.id
) AS lab ON true
ORDER BY ` + f.order("p")
	rows, err := s.pool.Query(ctx, query, ps...)
	if err != nil {
		return nil, 0, fmt.Errorf("list issues: %w", err)
	}
	// One allocation for the page's views rather than one per row.
	page := make([]View, 0, min(limit, 64))
	n := 0
	for rows.Next() {
		page = append(page, View{ProjectKey: p.Key})
		if err := scanListRow(rows, &page[len(page)-1], &n); err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("list issues: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list issues: %w", err)
	}
	views := make([]*View, len(page))
	for i := range page {
		views[i] = &page[i]
	}
	if len(views) == 0 && offset > 0 {
		// Past the last page there is no row to carry the total.
		if err := s.pool.QueryRow(ctx, "SELECT "+total, ps...).Scan(&n); err != nil {
			return nil, 0, fmt.Errorf("count issues: %w", err)
		}
	}
	return views, n, nil
}

// scanListRow reads one list row. Ids are scanned as raw 16-byte values: through
// uuid.UUID's sql.Scanner pgx would format and parse every id as text.
func scanListRow(rows pgx.Rows, v *View, total *int) error {
	var assignee, parent, sprint pgtype.UUID
	var ids [][16]byte
	var names, colors []string
	err := rows.Scan((*[16]byte)(&v.ID), (*[16]byte)(&v.ProjectID), &v.Number, &v.Key, &v.Title, &v.Description, &v.Type,
		&v.Priority, &v.StoryPoints, (*[16]byte)(&v.StatusID), &assignee, (*[16]byte)(&v.ReporterID), &parent, &v.DueDate,
		&sprint, &v.SLAStartTime, &v.CreatedAt, &v.UpdatedAt, &v.StatusName, &v.StatusCategory, &v.AssigneeName,
		&v.ReporterName, &v.SprintName, total, &ids, &names, &colors)
	if err != nil {
		return err
	}
	v.AssigneeID, v.ParentID, v.SprintID = optionalID(assignee), optionalID(parent), optionalID(sprint)
	v.Labels = make([]LabelRef, len(ids))
	for i := range ids {
		v.Labels[i] = LabelRef{ID: ids[i], Name: names[i], Color: colors[i]}
	}
	slices.SortFunc(v.Labels, func(a, b LabelRef) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	return nil
}

func optionalID(u pgtype.UUID) *uuid.UUID {
	if !u.Valid {
		return nil
	}
	id := uuid.UUID(u.Bytes)
	return &id
}
