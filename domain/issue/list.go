package issue

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/store"
)

// List returns one page of p's issues matching f, with labels and custom field values,
// and the total, in one statement whatever the page holds (listStatement); when
// f.FieldTypes did not read the project's fields and f has cf filters, the filters
// read their fields' types first. A page past the end has no row to carry the total,
// which then costs a statement of its own.
//
// It runs on pgx directly: this is the busiest read of the API, and typed binary
// scanning costs a fraction of reflection over database/sql.
func (s *Service) List(ctx context.Context, p Project, f Filter, offset, limit int) ([]*View, int, error) {
	views, total, _, err := s.ListCounted(ctx, p, f, offset, limit)
	return views, total, err
}

// ListCounted is List, saying also whether the total is exact: a ranked search counts
// its matches up to a bound (SearchCountAhead past the page) and answers the bound,
// not exact, when more match.
func (s *Service) ListCounted(ctx context.Context, p Project, f Filter, offset, limit int) ([]*View, int, bool, error) {
	fields, err := f.FieldTypes.fields()
	if err != nil {
		return nil, 0, false, err
	}
	conds, err := s.conditions(ctx, p, f, &fields)
	if err != nil {
		return nil, 0, false, err
	}
	today := s.now().UTC()
	key, kind := "", keptKind("")
	if s.matches != nil && s.tx == nil {
		key, kind = keptKey(p, f, conds, today)
	}
	if key != "" {
		views, total, ok, err := s.listKept(ctx, p, f, &fields, key, kind, offset, limit)
		if err != nil || ok {
			return views, total, true, err
		}
	}
	if kind == keptUpdated {
		key = "" // kept by listKept only, on a deep page
	}
	query, count, args, countArgs, countCap := listStatement(p, f, conds, today, offset, limit, key != "")
	views, n, err := s.listPage(ctx, p, query, args, &fields, key, limit)
	if err != nil {
		return nil, 0, false, err
	}
	if len(views) == 0 && (offset > 0 || f.After != nil) {
		if err := s.pool.QueryRow(ctx, count, args[:countArgs]...).Scan(&n); err != nil {
			return nil, 0, false, fmt.Errorf("count issues: %w", err)
		}
	}
	if countCap > 0 && n > countCap {
		return views, countCap, false, nil
	}
	return views, n, true, nil
}

// listKept serves the page from the numbers s.matches keeps under key when they are
// proven current, and says whether it did. The update order is read whole and kept
// only for a page at updatedKeepFrom or deeper, and at most once per
// Matches.rebuildEvery per key: read whole, it costs several deep pages, which a
// project written all the time would pay on every read; such a project's deep pages
// cost their skip, as without Matches.
func (s *Service) listKept(ctx context.Context, p Project, f Filter, fields *listFields, key string, kind keptKind, offset, limit int) ([]*View, int, bool, error) {
	e := s.matches.get(key)
	if e == nil && kind == keptUpdated && offset >= updatedKeepFrom && s.matches.mayBuild(key) {
		var nums []int32
		var snap string
		if err := s.pool.QueryRow(ctx, updatedOrderStatement, store.UUID(p.ID)).Scan(&nums, &snap); err != nil {
			return nil, 0, false, fmt.Errorf("list issues: %w", err)
		}
		e = s.matches.put(key, nums, snap)
	}
	if e == nil || offset >= len(e.nums) {
		return nil, 0, false, nil
	}
	query, args := keptStatement(p, f, kind, e.nums[offset:min(offset+limit, len(e.nums))], len(e.nums), e.snap)
	views, _, err := s.listPage(ctx, p, query, args, fields, "", limit)
	if err != nil {
		return nil, 0, false, err
	}
	if len(views) == 0 {
		// No row: a transaction the entry's snapshot did not see has changed what it
		// depends on since, or the entry is older than the changes kept.
		s.matches.drop(key, e)
		return nil, 0, false, nil
	}
	s.matches.hits.Add(1)
	return views, len(e.nums), true, nil
}

// updatedKeepFrom is the least offset at which an update-order page reads and keeps
// the whole order: nearer the front the skip costs less than reading it whole.
const updatedKeepFrom = 1000

// listPage runs a list statement and reads its rows, and the total they carry; with a
// key, the matches and snapshot the first row carries go to s.matches under it.
func (s *Service) listPage(ctx context.Context, p Project, query string, args []any, fields *listFields, key string, limit int) ([]*View, int, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list issues: %w", err)
	}
	// One allocation for the page's views rather than one per row.
	page := make([]View, 0, min(limit, 64))
	n := 0
	var sc listScan
	sc.keep = key != ""
	for rows.Next() {
		page = append(page, View{ProjectKey: p.Key})
		if err := sc.scan(rows, &page[len(page)-1], &n, fields); err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("list issues: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list issues: %w", err)
	}
	if sc.snap.Valid {
		s.matches.put(key, sc.nums, sc.snap.String)
	}
	views := make([]*View, len(page))
	for i := range page {
		views[i] = &page[i]
	}
	return views, n, nil
}

// listScan reads the rows of listStatement: RowColumns (RowScan), then the total, the
// packed custom field values, the packed field definitions and the search headline.
type listScan struct {
	row      RowScan
	values   pgtype.Text
	rawDefs  *string
	headline pgtype.Text
	// keep: the rows carry the matches and their snapshot too (listStatement's keep),
	// non-NULL on the first row only.
	keep bool
	nums []int32
	snap pgtype.Text
}

// scan reads one list row into v and the total into total. The field definitions are
// the same on every row: only the first row's are decoded, into lf, unless lf is
// loaded already (FieldTypesRead).
func (sc *listScan) scan(rows Scanner, v *View, total *int, lf *listFields) error {
	var defsDst any = &sc.rawDefs
	if lf.loaded {
		defsDst = nil
	}
	var err error
	if sc.keep {
		var nums []int32
		var snap pgtype.Text
		err = sc.row.Scan(rows, v, total, &sc.values, defsDst, &sc.headline, &nums, &snap)
		if snap.Valid {
			sc.nums, sc.snap = nums, snap
		}
	} else {
		err = sc.row.Scan(rows, v, total, &sc.values, defsDst, &sc.headline)
	}
	if err != nil {
		return err
	}
	v.Highlight = Highlight(sc.headline)
	if !lf.loaded {
		if err := lf.decode(sc.rawDefs); err != nil {
			return err
		}
	}
	v.CustomFields = make([]customfield.FieldValue, len(lf.defs))
	for i := range lf.defs {
		v.CustomFields[i].Field = &lf.defs[i]
	}
	err = parseValues(sc.values.String, func(field uuid.UUID) *customfield.Value {
		i, ok := lf.index[field]
		if !ok {
			return nil // a field created after the statement read the fields
		}
		return &v.CustomFields[i].Value
	})
	for i := range v.CustomFields {
		if cf := &v.CustomFields[i]; cf.OptionID != nil && cf.OptionLabel == nil {
			// Shared by every row naming the option; nothing writes through it.
			cf.OptionLabel = lf.labels[*cf.OptionID]
		}
	}
	return err
}
