// Package customfield owns a project's custom fields: their definitions (TEXT, NUMBER,
// DATE, DROPDOWN, CHECKBOX), the options of DROPDOWN fields, the values issues hold and
// the SQL of the issue list's cf filter (docs/api-conventions.md#custom-fields). It
// knows nothing of issues beyond their ids: the issue rules call it inside their own
// transaction.
package customfield

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// Field types. A field's type is fixed when it is created.
const (
	TypeText     = "TEXT"
	TypeNumber   = "NUMBER"
	TypeDate     = "DATE"
	TypeDropdown = "DROPDOWN"
	TypeCheckbox = "CHECKBOX"
)

// Types lists the field types in display order.
var Types = []string{TypeText, TypeNumber, TypeDate, TypeDropdown, TypeCheckbox}

// Limits of names and values.
const (
	MaxName  = 100
	MaxLabel = 100
	// MaxText bounds a TEXT value, as Jira's single-line text field does (255 is its
	// default; a paragraph fits here).
	MaxText = 10000
	// MaxNumber bounds a NUMBER value's written length, so a value is a number a person
	// would type, not a thousand digits.
	MaxNumber = 40
	// MaxFilters bounds the cf terms of one issue list. Each term is planned and probed
	// on its own index, and planning grows faster than linearly with the terms: some 150
	// TEXT terms held a backend for the whole request deadline. Twenty is more than a
	// saved filter of Jira's or Linear's ever combines (docs/api-conventions.md#limits).
	MaxFilters = 20
	// MaxFilterText bounds a TEXT filter's substring: a search term, not a document, so
	// its trigrams stay a handful of index probes.
	MaxFilterText = 255
)

// Errors of the definition and option rules; api/ maps each to its status.
var (
	ErrNotFound        = errors.New("custom field: not found")
	ErrOptionNotFound  = errors.New("custom field: option not found")
	ErrDuplicateName   = errors.New("custom field: name already used in this project")
	ErrDuplicateLabel  = errors.New("custom field: option label already used in this field")
	ErrNotDropdown     = errors.New("custom field: only DROPDOWN fields have options")
	ErrDuplicateFields = errors.New("custom field: a reorder names a field twice")
)

// Constraints behind the duplicate errors.
const (
	uniqueName  = "custom_fields_project_name_key"
	uniqueLabel = "custom_field_options_field_label_key"
)

// Definition is a field with its options (DROPDOWN only; empty for other types), by
// sortOrder.
type Definition struct {
	ID        uuid.UUID
	ProjectID uuid.UUID
	Name      string
	Type      string
	Required  bool
	SortOrder int
	Options   []Option
}

// Option is one choice of a DROPDOWN field.
type Option struct {
	ID        uuid.UUID `json:"id"`
	FieldID   uuid.UUID `json:"-"`
	Label     string    `json:"label"`
	SortOrder int       `json:"sortOrder"`
}

// option returns the option of d with id, or nil.
func (d *Definition) option(id uuid.UUID) *Option {
	for i := range d.Options {
		if d.Options[i].ID == id {
			return &d.Options[i]
		}
	}
	return nil
}

// Valid reports whether t is a field type.
func Valid(t string) bool {
	for _, x := range Types {
		if x == t {
			return true
		}
	}
	return false
}

// fieldOrder is the order of a project's fields everywhere they are listed.
const fieldOrder = "cf.sort_order, cf.created_at, cf.id"

// List returns the project's fields by sortOrder (then creation), each with its options
// by sortOrder, in one query.
func List(ctx context.Context, db bun.IDB, projectID uuid.UUID) ([]Definition, error) {
	return list(ctx, db, "cf.project_id = ?", projectID)
}

// Get returns one field of the project with its options; a field of another project is
// ErrNotFound.
func Get(ctx context.Context, db bun.IDB, projectID, id uuid.UUID) (*Definition, error) {
	defs, err := list(ctx, db, "cf.project_id = ? AND cf.id = ?", projectID, id)
	if err != nil {
		return nil, err
	}
	if len(defs) == 0 {
		return nil, ErrNotFound
	}
	return &defs[0], nil
}

// list reads the fields matching where with their options: the options are joined, so
// a field comes back once per option (or once with none).
func list(ctx context.Context, db bun.IDB, where string, args ...any) ([]Definition, error) {
	var rows []struct {
		store.CustomField `bun:",extend"`
		OptionID          *uuid.UUID `bun:"option_id"`
		OptionLabel       *string    `bun:"option_label"`
		OptionSort        *int       `bun:"option_sort"`
	}
	err := db.NewSelect().Model(&rows).
		ColumnExpr("cf.*").
		ColumnExpr("cfo.id AS option_id, cfo.label AS option_label, cfo.sort_order AS option_sort").
		Join("LEFT JOIN custom_field_options AS cfo ON cfo.field_id = cf.id").
		Where(where, args...).
		OrderExpr(fieldOrder + ", cfo.sort_order, cfo.created_at, cfo.id").
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list custom fields: %w", err)
	}
	out := []Definition{}
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].ID != r.ID {
			out = append(out, Definition{ID: r.ID, ProjectID: r.ProjectID, Name: r.Name, Type: r.Type,
				Required: r.Required, SortOrder: r.SortOrder, Options: []Option{}})
		}
		if r.OptionID != nil {
			d := &out[len(out)-1]
			d.Options = append(d.Options, Option{ID: *r.OptionID, FieldID: r.ID, Label: *r.OptionLabel, SortOrder: *r.OptionSort})
		}
	}
	return out, nil
}

// DefinitionsSQL is a scalar SQL expression of the project's fields with their options,
// as JSON text, for a statement that reads them together with other things (an issue
// create reads them with the default status); project is the placeholder of the
// project id. DecodeDefinitions reads the text.
func DefinitionsSQL(project string) string {
	return `(SELECT coalesce(json_agg(json_build_object('id', cf.id, 'name', cf.name, 'type', cf.type, 'required', cf.required,
			'sortOrder', cf.sort_order, 'options', (
				SELECT coalesce(json_agg(json_build_object('id', o.id, 'label', o.label, 'sortOrder', o.sort_order)
					ORDER BY o.sort_order, o.created_at, o.id), '[]')
				FROM custom_field_options AS o WHERE o.field_id = cf.id))
		ORDER BY ` + fieldOrder + `), '[]')::text
	FROM custom_fields AS cf WHERE cf.project_id = ` + project + `)`
}

// DecodeDefinitions reads DefinitionsSQL's text.
func DecodeDefinitions(text string) ([]Definition, error) {
	var rows []struct {
		ID        uuid.UUID `json:"id"`
		Name      string    `json:"name"`
		Type      string    `json:"type"`
		Required  bool      `json:"required"`
		SortOrder int       `json:"sortOrder"`
		Options   []Option  `json:"options"`
	}
	if err := json.Unmarshal([]byte(text), &rows); err != nil {
		return nil, fmt.Errorf("decode custom fields: %w", err)
	}
	out := make([]Definition, len(rows))
	for i, r := range rows {
		out[i] = Definition{ID: r.ID, Name: r.Name, Type: r.Type, Required: r.Required, SortOrder: r.SortOrder, Options: r.Options}
		for j := range out[i].Options {
			out[i].Options[j].FieldID = r.ID
		}
	}
	return out, nil
}
