package issue

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/store"
)

// selectViews is the statement of the issues (alias i) matching where, in RowColumns,
// with extra columns after them (each preceded by a comma); where is bun's SQL, with ?
// placeholders.
func selectViews(extra, where string) string {
	return "SELECT " + RowColumns + extra + "\nFROM issues AS i\n" + RowJoins + "\nWHERE " + where
}

// readView reads one issue of p by ref through db (RowColumns, then one column into
// each of extra), or ErrNotFound.
func readView(ctx context.Context, db bun.IDB, p Project, ref Ref, extraColumns string, extra ...any) (*View, error) {
	cond, value := ref.Condition()
	rows, err := db.QueryContext(ctx, selectViews(extraColumns, "i.project_id = ? AND "+cond), p.ID, value)
	if err != nil {
		return nil, fmt.Errorf("load issue: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("load issue: %w", err)
		}
		return nil, ErrNotFound
	}
	v := &View{ProjectKey: p.Key}
	var sc RowScan
	if err := sc.Scan(rows, v, extra...); err != nil {
		return nil, fmt.Errorf("load issue: %w", err)
	}
	return v, rows.Close()
}

// loadView reads one issue of p by ref; lock takes the issue row's lock (FOR UPDATE),
// so concurrent changes of one issue serialize.
//
// The lock is taken on the issue row alone, by a statement of its own, and the view is
// read after it. Locking in the joined read (FOR UPDATE OF i) would lose the row: when
// a concurrent change of the issue commits while the read waits for its lock, Postgres
// re-checks the locked row's new version against the join with the status row it
// found before (READ COMMITTED), and a changed status no longer matches, so a
// contended move would answer 404 for an issue that exists. After the lock the read
// takes a new snapshot, which sees the change it waited for.
func loadView(ctx context.Context, db bun.IDB, p Project, ref Ref, lock bool) (*View, error) {
	if lock {
		var id uuid.UUID
		err := ref.where(db.NewSelect().TableExpr("issues AS i").Column("i.id"), p).For("UPDATE").Scan(ctx, &id)
		if err != nil {
			if store.IsNotFound(err) {
				return nil, ErrNotFound
			}
			return nil, fmt.Errorf("lock issue: %w", err)
		}
		ref = Ref{ID: id}
	}
	return readView(ctx, db, p, ref, "")
}

// Get returns one issue with its labels, versions and custom fields, and whether the
// read is to be recorded (View.ViewAudited).
func (s *Service) Get(ctx context.Context, p Project, ref Ref) (*View, error) {
	var viewAudited bool
	v, err := readView(ctx, s.db, p, ref, ", coalesce((SELECT enabled FROM audit_config WHERE level = '"+string(audit.LevelAll)+"'), false)", &viewAudited)
	if err != nil {
		return nil, err
	}
	v.ViewAudited = viewAudited
	if err := fillVersions(ctx, s.db, v); err != nil {
		return nil, err
	}
	if err := fillCustomFields(ctx, s.db, p, v); err != nil {
		return nil, err
	}
	return v, nil
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
