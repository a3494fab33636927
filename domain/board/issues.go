package board

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskweave/taskweave/domain/issue"
)

// issueQuery selects issues (alias i) matching where with every name an IssueResponse
// shows and, through one lateral join, their labels: the board and the backlog load any
// number of issues in this one statement. where may use $1 (the project id) and the
// caller's further parameters.
func issueQuery(where string) string {
	return `SELECT i.id, i.project_id, i.number, i.key, i.title, i.description, i.type, i.priority, i.story_points,
	i.status_id, i.assignee_id, i.reporter_id, i.parent_id, i.due_date, i.sprint_id, i.sla_start_time, i.created_at,
	i.updated_at, s.name, s.category, a.display_name, r.display_name, sp.name, lab.ids, lab.names, lab.colors
FROM issues AS i
JOIN workflow_statuses AS s ON s.id = i.status_id
JOIN users AS r ON r.id = i.reporter_id
LEFT JOIN users AS a ON a.id = i.assignee_id
LEFT JOIN sprints AS sp ON sp.id = i.sprint_id
LEFT JOIN LATERAL (
	SELECT array_agg(l.id) AS ids, array_agg(l.name) AS names, array_agg(l.color) AS colors
	FROM issue_labels AS il JOIN labels AS l ON l.id = il.label_id
	WHERE il.issue_id = i.id
) AS lab ON true
WHERE i.project_id = $1 AND (` + where + `)
ORDER BY i.number`
}

// loadIssues runs issueQuery and returns the views in key-number order.
func loadIssues(ctx context.Context, pool *pgxpool.Pool, projectKey, where string, args ...any) ([]*issue.View, error) {
	rows, err := pool.Query(ctx, issueQuery(where), args...)
	if err != nil {
		return nil, fmt.Errorf("load issues: %w", err)
	}
	defer rows.Close()
	// One allocation for every view rather than one per row.
	var all []issue.View
	for rows.Next() {
		all = append(all, issue.View{ProjectKey: projectKey})
		if err := scanIssue(rows, &all[len(all)-1]); err != nil {
			return nil, fmt.Errorf("load issues: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load issues: %w", err)
	}
	out := make([]*issue.View, len(all))
	for i := range all {
		out[i] = &all[i]
	}
	return out, nil
}

// scanIssue reads one issueQuery row. Ids are scanned as raw 16-byte values: through
// uuid.UUID's sql.Scanner pgx would format and parse every id as text.
func scanIssue(rows pgx.Rows, v *issue.View) error {
	var assignee, parent, sprint pgtype.UUID
	var ids [][16]byte
	var names, colors []string
	err := rows.Scan((*[16]byte)(&v.ID), (*[16]byte)(&v.ProjectID), &v.Number, &v.Key, &v.Title, &v.Description, &v.Type,
		&v.Priority, &v.StoryPoints, (*[16]byte)(&v.StatusID), &assignee, (*[16]byte)(&v.ReporterID), &parent, &v.DueDate,
		&sprint, &v.SLAStartTime, &v.CreatedAt, &v.UpdatedAt, &v.StatusName, &v.StatusCategory, &v.AssigneeName,
		&v.ReporterName, &v.SprintName, &ids, &names, &colors)
	if err != nil {
		return err
	}
	v.AssigneeID, v.ParentID, v.SprintID = optionalID(assignee), optionalID(parent), optionalID(sprint)
	v.Labels = make([]issue.LabelRef, len(ids))
	for i := range ids {
		v.Labels[i] = issue.LabelRef{ID: ids[i], Name: names[i], Color: colors[i]}
	}
	// Labels by name, as every other issue reply orders them.
	slices.SortFunc(v.Labels, func(a, b issue.LabelRef) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	v.FixVersions, v.AffectsVersions = []issue.VersionRef{}, []issue.VersionRef{}
	return nil
}

func optionalID(u pgtype.UUID) *uuid.UUID {
	if !u.Valid {
		return nil
	}
	id := uuid.UUID(u.Bytes)
	return &id
}

// points sums story points, null counting 0.
func points(views []*issue.View) int {
	n := 0
	for _, v := range views {
		if v.StoryPoints != nil {
			n += *v.StoryPoints
		}
	}
	return n
}
