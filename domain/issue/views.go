package issue

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Views reads the issues of p with the given ids, with their labels, in two queries
// whatever their number: for lists of other packages (the service desk's tickets) that
// pick and order the ids themselves. Ids of other projects' issues are left out.
func Views(ctx context.Context, db bun.IDB, p Project, ids []uuid.UUID) (map[uuid.UUID]*View, error) {
	out := make(map[uuid.UUID]*View, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []View
	if err := selectView(db, &rows).Where("i.project_id = ?", p.ID).Where("i.id IN (?)", bun.In(ids)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load issues: %w", err)
	}
	views := make([]*View, len(rows))
	for i := range rows {
		rows[i].ProjectKey = p.Key
		rows[i].FixVersions, rows[i].AffectsVersions = []VersionRef{}, []VersionRef{}
		views[i] = &rows[i]
		out[rows[i].ID] = &rows[i]
	}
	if err := fillLabels(ctx, db, views); err != nil {
		return nil, err
	}
	return out, nil
}
