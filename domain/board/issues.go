package board

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskweave/taskweave/domain/issue"
)

// issueQuery selects issues (alias i) matching where as every issue read shows them
// (issue.RowColumns): the board and the backlog load any number of issues in this one
// statement. where may use $1 (the project id) and the caller's further parameters.
func issueQuery(where string) string {
	return `SELECT ` + issue.RowColumns + `
FROM issues AS i
` + issue.RowJoins + `
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
	var sc issue.RowScan
	for rows.Next() {
		all = append(all, issue.View{ProjectKey: projectKey})
		v := &all[len(all)-1]
		if err := sc.Scan(rows, v); err != nil {
			return nil, fmt.Errorf("load issues: %w", err)
		}
		v.FixVersions, v.AffectsVersions = []issue.VersionRef{}, []issue.VersionRef{}
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
