package issue

import (
	"bytes"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/taskweave/taskweave/store"
)

// RowColumns are the columns of one issue row as every read shows it (the list, the
// board and backlog, the single reads), in the order RowScan reads them: the issue on
// issues aliased i, the names of its status, people and sprint (RowJoins), and its
// labels packed into one text (parseLabels). The row's copies of its custom field values
// (custom_packed, custom_terms) are left out: only the list reads them, by a column of
// its own. imported_key is the original key of an imported issue (docs/tasks.md#import),
// NULL for others: a primary-key probe per row returned. The labels are a sub-select of the row rather than a LATERAL join, which the
// planner fronts with a per-issue cache that never hits.
const RowColumns = `i.id, i.project_id, i.number, i.key, i.title, i.description, i.type, i.priority, i.story_points,
	i.status_id, i.assignee_id, i.reporter_id, i.parent_id, i.due_date, i.sprint_id, i.sla_start_time, i.created_at,
	i.updated_at, s.name AS status_name, s.category AS status_category, a.display_name AS assignee_name,
	r.display_name AS reporter_name, sp.name AS sprint_name, (
	SELECT string_agg(l.id::text || octet_length(l.name) || ':' || l.name || octet_length(l.color) || ':' || l.color, '')
	FROM issue_labels AS il JOIN labels AS l ON l.id = il.label_id
	WHERE il.issue_id = i.id
) AS labels, (SELECT ii.source_key FROM issue_imports AS ii WHERE ii.issue_id = i.id) AS imported_key`

// RowJoins are the joins RowColumns reads the names through, on issues aliased i.
const RowJoins = `JOIN workflow_statuses AS s ON s.id = i.status_id
JOIN users AS r ON r.id = i.reporter_id
LEFT JOIN users AS a ON a.id = i.assignee_id
LEFT JOIN sprints AS sp ON sp.id = i.sprint_id`

// Scanner is a result row of either driver: pgx.Rows, pgx.Row, *sql.Rows, *sql.Row.
type Scanner interface {
	Scan(dest ...any) error
}

// RowScan reads rows of RowColumns into Views. One serves every row of a statement:
// its destinations are allocated once rather than once per row (every destination
// handed to Scan escapes to the heap). Ids are read through pgtype.UUID, which pgx
// decodes from binary (a uuid.UUID, an sql.Scanner, would be formatted and parsed as
// text) and database/sql from text, so the one scanner serves both drivers.
type RowScan struct {
	id, project, status, reporter, assignee, parent, sprint pgtype.UUID
	labels                                                  pgtype.Text
	dest                                                    []any
}

// Scan reads the current row of row into v: RowColumns, then one column into each of
// extra. v.ProjectKey, the versions and the custom fields are the caller's.
func (sc *RowScan) Scan(row Scanner, v *View, extra ...any) error {
	sc.dest = append(sc.dest[:0], &sc.id, &sc.project, &v.Number, &v.Key, &v.Title, &v.Description, &v.Type,
		&v.Priority, &v.StoryPoints, &sc.status, &sc.assignee, &sc.reporter, &sc.parent, &v.DueDate, &sc.sprint,
		&v.SLAStartTime, &v.CreatedAt, &v.UpdatedAt, &v.StatusName, &v.StatusCategory, &v.AssigneeName,
		&v.ReporterName, &v.SprintName, &sc.labels, &v.ImportedKey)
	sc.dest = append(sc.dest, extra...)
	if err := row.Scan(sc.dest...); err != nil {
		return err
	}
	v.ID, v.ProjectID, v.StatusID, v.ReporterID = sc.id.Bytes, sc.project.Bytes, sc.status.Bytes, sc.reporter.Bytes
	v.AssigneeID, v.ParentID, v.SprintID = store.UUIDPtr(sc.assignee), store.UUIDPtr(sc.parent), store.UUIDPtr(sc.sprint)
	var err error
	v.Labels, err = parseLabels(sc.labels.String)
	return err
}

// parseLabels reads a row's packed labels (per label its id, name and color; see
// packed) in name order, ties by id: the order of every issue reply. They are sorted
// here, by bytes, rather than in the statement, so the order does not depend on the
// database's collation.
func parseLabels(s string) ([]LabelRef, error) {
	p := packed{s}
	out := make([]LabelRef, 0, strings.Count(s, "-")/4)
	for p.s != "" {
		var l LabelRef
		var err error
		if l.ID, err = p.id(); err != nil {
			return nil, err
		}
		if l.Name, err = p.str(); err != nil {
			return nil, err
		}
		if l.Color, err = p.str(); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b LabelRef) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	return out, nil
}
