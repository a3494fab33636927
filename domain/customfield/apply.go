package customfield

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// Change is one field whose value a request changes, for the issue's FieldChanged
// event and activity entry.
type Change struct {
	Field    *Definition
	Old, New Value
}

// Blank is every field of defs without a value: what a new issue starts from.
func Blank(defs []Definition) []FieldValue {
	out := make([]FieldValue, len(defs))
	for i := range defs {
		out[i] = FieldValue{Field: &defs[i]}
	}
	return out
}

// ForIssue returns every field of the project, with its options, and the value
// issueID holds for it, in the fields' order, in one query.
func ForIssue(ctx context.Context, db bun.IDB, projectID, issueID uuid.UUID) ([]FieldValue, error) {
	var rows []struct {
		store.CustomField `bun:",extend"`
		OptionID          *uuid.UUID `bun:"option_id"`
		OptionLabel       *string    `bun:"option_label"`
		OptionSort        *int       `bun:"option_sort"`
		Set               bool       `bun:"value_set"`
		Text              *string    `bun:"text_value"`
		Number            *string    `bun:"number_value"`
		Date              *time.Time `bun:"date_value,type:date"`
		Bool              *bool      `bun:"bool_value"`
		ValueOption       *uuid.UUID `bun:"value_option_id"`
	}
	err := db.NewSelect().Model(&rows).
		ColumnExpr("cf.*").
		ColumnExpr("cfo.id AS option_id, cfo.label AS option_label, cfo.sort_order AS option_sort").
		ColumnExpr("v.field_id IS NOT NULL AS value_set, v.text_value, v.number_value::text AS number_value, v.date_value, v.bool_value, v.option_id AS value_option_id").
		Join("LEFT JOIN custom_field_options AS cfo ON cfo.field_id = cf.id").
		Join("LEFT JOIN custom_field_values AS v ON v.field_id = cf.id AND v.issue_id = ?", issueID).
		Where("cf.project_id = ?", projectID).
		OrderExpr(fieldOrder + ", cfo.sort_order, cfo.created_at, cfo.id").
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("load custom field values: %w", err)
	}
	defs := []Definition{}
	var values []Value
	for _, r := range rows {
		if len(defs) == 0 || defs[len(defs)-1].ID != r.ID {
			defs = append(defs, Definition{ID: r.ID, ProjectID: r.ProjectID, Name: r.Name, Type: r.Type,
				Required: r.Required, SortOrder: r.SortOrder, Options: []Option{}})
			values = append(values, Value{Set: r.Set, Text: r.Text, Number: r.Number, Date: r.Date, Bool: r.Bool,
				OptionID: r.ValueOption})
		}
		if r.OptionID != nil {
			d := &defs[len(defs)-1]
			d.Options = append(d.Options, Option{ID: *r.OptionID, FieldID: r.ID, Label: *r.OptionLabel, SortOrder: *r.OptionSort})
		}
	}
	out := make([]FieldValue, len(defs))
	for i := range defs {
		v := values[i]
		if v.OptionID != nil {
			if o := defs[i].option(*v.OptionID); o != nil {
				v.OptionLabel = &o.Label
			}
		}
		out[i] = FieldValue{Field: &defs[i], Value: v}
	}
	return out, nil
}

// Plan checks the inputs against the issue's current values (every field of the
// project, as ForIssue or Blank give them) and returns the values after them and the
// fields they change, in the fields' order. Inputs are checked in the order sent, and
// the first bad one is the error: a field sent twice, a value its field cannot hold.
// An id that names no field of the project is dropped, as ids of another project are
// everywhere (a form opened before the field was deleted still saves). A required field
// may not lose its value; on create (create true) every required field needs one.
func Plan(current []FieldValue, in []Input, create bool) ([]FieldValue, []Change, error) {
	byID := make(map[uuid.UUID]int, len(current))
	for i, fv := range current {
		byID[fv.Field.ID] = i
	}
	next := make([]FieldValue, len(current))
	copy(next, current)
	seen := make(map[uuid.UUID]bool, len(in))
	for _, x := range in {
		i, ok := byID[x.FieldID]
		if seen[x.FieldID] {
			return nil, nil, &InvalidError{FieldID: x.FieldID}
		}
		if !ok {
			continue
		}
		seen[x.FieldID] = true
		d := current[i].Field
		var v Value
		if x.Value != nil {
			var err error
			if v, err = d.Parse(*x.Value); err != nil {
				return nil, nil, err
			}
		}
		if d.Required && !v.Set {
			return nil, nil, &RequiredError{FieldID: d.ID, FieldName: d.Name}
		}
		next[i].Value = v
	}
	if create {
		for _, fv := range next {
			if fv.Field.Required && !fv.Set {
				return nil, nil, &RequiredError{FieldID: fv.Field.ID, FieldName: fv.Field.Name}
			}
		}
	}
	var changes []Change
	for i := range next {
		if !next[i].equal(current[i].Value) {
			changes = append(changes, Change{Field: next[i].Field, Old: current[i].Value, New: next[i].Value})
		}
	}
	return next, changes, nil
}

// Write stores the changed values of issueID: set ones in one statement, removed ones
// in another, inside the caller's transaction.
func Write(ctx context.Context, db bun.IDB, issueID uuid.UUID, changes []Change) error {
	var set []store.CustomFieldValue
	var removed []uuid.UUID
	for _, c := range changes {
		if !c.New.Set {
			removed = append(removed, c.Field.ID)
			continue
		}
		set = append(set, store.CustomFieldValue{IssueID: issueID, FieldID: c.Field.ID, TextValue: c.New.Text,
			NumberValue: c.New.Number, DateValue: c.New.Date, BoolValue: c.New.Bool, OptionID: c.New.OptionID})
	}
	if len(set) > 0 {
		_, err := db.NewInsert().Model(&set).
			On("CONFLICT (issue_id, field_id) DO UPDATE").
			Set("text_value = EXCLUDED.text_value, number_value = EXCLUDED.number_value, date_value = EXCLUDED.date_value").
			Set("bool_value = EXCLUDED.bool_value, option_id = EXCLUDED.option_id").
			Exec(ctx)
		if err != nil {
			return fmt.Errorf("store custom field values: %w", err)
		}
	}
	if len(removed) > 0 {
		_, err := db.NewDelete().Model((*store.CustomFieldValue)(nil)).
			Where("issue_id = ? AND field_id IN (?)", issueID, bun.In(removed)).Exec(ctx)
		if err != nil {
			return fmt.Errorf("remove custom field values: %w", err)
		}
	}
	return nil
}
