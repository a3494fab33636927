package issue

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/project"
)

// FieldTypesRead reads the project's custom fields as a column of the project's row,
// packed as the list statement would carry them (packedFieldsSQL): GET /issues adds it
// to its access statement (project.LoadWithUser). The cf filters' types then cost no
// round trip, and the list statement leaves them out: as a column of the list, the
// same definitions would go out with every row of the page. They are read a moment
// before the rows: a field created in between is not listed (as a field created after
// the list), one deleted in between is listed without a value, either as a list read a
// moment earlier or later would.
type FieldTypesRead struct {
	Extra project.Extra
	raw   *string
}

// NewFieldTypesRead prepares the read.
func NewFieldTypesRead() *FieldTypesRead {
	r := &FieldTypesRead{}
	r.Extra.Columns = ", " + packedFieldsSQL("p.id")
	r.Extra.Dest = []any{&r.raw}
	return r
}

// read says whether the access statement read the fields.
func (r *FieldTypesRead) read() bool { return r != nil && r.Extra.Scanned }

// fields decodes what r read; not loaded when the access statement did not run it.
func (r *FieldTypesRead) fields() (listFields, error) {
	var lf listFields
	if !r.read() {
		return lf, nil
	}
	if err := lf.decode(r.raw); err != nil {
		return lf, fmt.Errorf("list issues: %w", err)
	}
	return lf, nil
}

// conditions resolves f's cf filters (against lf when it is loaded from FieldTypes,
// else in a query).
func (s *Service) conditions(ctx context.Context, p Project, f Filter, lf *listFields) ([]customfield.Condition, error) {
	if len(f.CustomFields) == 0 {
		return nil, nil
	}
	if !lf.loaded {
		return customfield.Resolve(ctx, s.db, p.ID, f.CustomFields)
	}
	return customfield.ResolveWith(lf.defs, f.CustomFields)
}

// ResolveFieldTypes is customfield.Resolve against the fields r read.
func ResolveFieldTypes(r *FieldTypesRead, filters []customfield.Filter) ([]customfield.Condition, error) {
	lf, err := r.fields()
	if err != nil {
		return nil, err
	}
	return customfield.ResolveWith(lf.defs, filters)
}

// packedFieldsSQL is a scalar expression of the project's custom fields with their
// options as packed text (listFields.decode reads it); project is the SQL of its id.
func packedFieldsSQL(project string) string {
	return `(
	SELECT string_agg('F' || d.id::text || octet_length(d.type) || ':' || d.type || octet_length(d.name) || ':' || d.name
		|| CASE WHEN d.required THEN '1' ELSE '0' END || coalesce((
		SELECT string_agg('O' || o.id::text || octet_length(o.label) || ':' || o.label, '')
		FROM custom_field_options AS o WHERE o.field_id = d.id), ''), '' ORDER BY d.sort_order, d.created_at, d.id)
	FROM custom_fields AS d WHERE d.project_id = ` + project + `
)`
}

// listFields are the project's custom fields as packedFieldsSQL packs them, read by the
// access statement (FieldTypesRead) or else carried by the list statement and decoded
// from its first row.
type listFields struct {
	loaded bool
	defs   []customfield.Definition
	index  map[uuid.UUID]int
	// labels are the DROPDOWN options' labels by option id: the rows' packed values
	// name options by id only (migration 0027).
	labels map[uuid.UUID]*string
}

// decode reads the fields' packed text (null: none), in the fields' order: per field
// F, its id, type and name (each string as its byte length, a colon and the bytes)
// and 1 or 0 for required, then per option of it O, the option's id and label. Packed
// like the values rather than as JSON, which would be decoded by reflection.
func (lf *listFields) decode(raw *string) error {
	lf.loaded = true
	if raw == nil {
		return nil
	}
	p := packed{*raw}
	lf.index = map[uuid.UUID]int{}
	lf.labels = map[uuid.UUID]*string{}
	for p.s != "" {
		tag, err := p.byte()
		if err != nil {
			return err
		}
		id, err := p.id()
		if err != nil {
			return err
		}
		switch tag {
		case 'F':
			d := customfield.Definition{ID: id}
			if d.Type, err = p.str(); err != nil {
				return err
			}
			if d.Name, err = p.str(); err != nil {
				return err
			}
			req, err := p.byte()
			if err != nil {
				return err
			}
			d.Required = req == '1'
			lf.index[id] = len(lf.defs)
			lf.defs = append(lf.defs, d)
		case 'O':
			label, err := p.str()
			if err != nil {
				return err
			}
			lf.labels[id] = &label
		default:
			return errPacked
		}
	}
	return nil
}
