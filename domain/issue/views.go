package issue

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Views reads the issues of p with the given ids, with their labels, in one statement
// whatever their number: for lists of other packages (the service desk's tickets) that
// pick and order the ids themselves. Ids of other projects' issues are left out.
func Views(ctx context.Context, db bun.IDB, p Project, ids []uuid.UUID) (map[uuid.UUID]*View, error) {
	out := make(map[uuid.UUID]*View, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.QueryContext(ctx, selectViews("", "i.project_id = ? AND i.id IN (?)"), p.ID, bun.In(ids))
	if err != nil {
		return nil, fmt.Errorf("load issues: %w", err)
	}
	defer rows.Close()
	var sc RowScan
	for rows.Next() {
		v := &View{ProjectKey: p.Key, FixVersions: []VersionRef{}, AffectsVersions: []VersionRef{}}
		if err := sc.Scan(rows, v); err != nil {
			return nil, fmt.Errorf("load issues: %w", err)
		}
		out[v.ID] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load issues: %w", err)
	}
	return out, nil
}
