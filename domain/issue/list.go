package issue

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/taskweave/taskweave/domain/customfield"
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
	query, count, args, countArgs, countCap := listStatement(p, f, conds, s.now().UTC(), offset, limit)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, 0, false, fmt.Errorf("list issues: %w", err)
	}
	// One allocation for the page's views rather than one per row.
	page := make([]View, 0, min(limit, 64))
	n := 0
	var sc listScan
	for rows.Next() {
		page = append(page, View{ProjectKey: p.Key})
		if err := sc.scan(rows, &page[len(page)-1], &n, &fields); err != nil {
			rows.Close()
			return nil, 0, false, fmt.Errorf("list issues: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, false, fmt.Errorf("list issues: %w", err)
	}
	views := make([]*View, len(page))
	for i := range page {
		views[i] = &page[i]
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

// listScan reads the rows of listStatement: RowColumns (RowScan), then the total, the
// packed custom field values, the packed field definitions and the search headline.
type listScan struct {
	row      RowScan
	values   pgtype.Text
	rawDefs  *string
	headline pgtype.Text
}

// scan reads one list row into v and the total into total. The field definitions are
// the same on every row: only the first row's are decoded, into lf, unless lf is
// loaded already (FieldTypesRead).
func (sc *listScan) scan(rows Scanner, v *View, total *int, lf *listFields) error {
	var defsDst any = &sc.rawDefs
	if lf.loaded {
		defsDst = nil
	}
	if err := sc.row.Scan(rows, v, total, &sc.values, defsDst, &sc.headline); err != nil {
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
	err := parseValues(sc.values.String, func(field uuid.UUID) *customfield.Value {
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
