package customfield

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Filter is one cf=<fieldId>:<value> of the issue list, as the query sent it.
type Filter struct {
	FieldID uuid.UUID
	Value   string
}

// Condition is a Filter read against its field's type: TEXT a case-insensitive
// substring, NUMBER, DATE and DROPDOWN (an option id) exact, CHECKBOX true or false
// (false also matches issues that never had the box ticked).
type Condition struct {
	FieldID uuid.UUID
	Type    string
	Text    string
	Number  string
	Date    time.Time
	Bool    bool
	Option  uuid.UUID
}

// Resolve reads the types of the filters' fields in one query and turns each filter
// into its condition. A field of no field of the project is ignored (no condition); a
// value its field's type cannot match is an InvalidError naming the field.
func Resolve(ctx context.Context, db bun.IDB, projectID uuid.UUID, filters []Filter) ([]Condition, error) {
	if len(filters) == 0 {
		return nil, nil
	}
	ids := make([]uuid.UUID, len(filters))
	for i, f := range filters {
		ids[i] = f.FieldID
	}
	var rows []struct {
		ID   uuid.UUID `bun:"id"`
		Name string    `bun:"name"`
		Type string    `bun:"type"`
	}
	err := db.NewSelect().Table("custom_fields").Column("id", "name", "type").
		Where("project_id = ? AND id IN (?)", projectID, bun.In(ids)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("read custom field types: %w", err)
	}
	defs := make(map[uuid.UUID]*Definition, len(rows))
	for _, r := range rows {
		defs[r.ID] = &Definition{ID: r.ID, Name: r.Name, Type: r.Type}
	}
	out := make([]Condition, 0, len(filters))
	for _, f := range filters {
		d, ok := defs[f.FieldID]
		if !ok {
			continue
		}
		c := Condition{FieldID: d.ID, Type: d.Type}
		invalid := &InvalidError{FieldID: d.ID, FieldName: d.Name, Type: d.Type}
		switch d.Type {
		case TypeText:
			if f.Value == "" || len(f.Value) > MaxText {
				return nil, invalid
			}
			c.Text = f.Value
		case TypeDropdown:
			id, err := uuid.Parse(f.Value)
			if err != nil || len(f.Value) != 36 {
				return nil, invalid
			}
			c.Option = id
		default:
			// The other types read a filter value as a value is read.
			v, err := d.Parse(f.Value)
			if err != nil {
				return nil, err
			}
			switch {
			case v.Number != nil:
				c.Number = *v.Number
			case v.Date != nil:
				c.Date = *v.Date
			case v.Bool != nil:
				c.Bool = *v.Bool
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// likeEscaper makes user text literal inside an ILIKE pattern.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// SQL is the condition on the issue whose id is the SQL expression issueID: the
// issues holding the value, read from the value side (the indexes of migration 0024
// on field and value), never by reading every issue's values. arg adds a statement
// argument and returns its placeholder.
func (c Condition) SQL(issueID string, arg func(any) string) string {
	in := func(cond string) string {
		return issueID + " IN (SELECT v.issue_id FROM custom_field_values AS v WHERE v.field_id = " + arg(c.FieldID) +
			" AND " + cond + ")"
	}
	switch c.Type {
	case TypeText:
		return in("v.text_value ILIKE " + arg("%"+likeEscaper.Replace(c.Text)+"%"))
	case TypeNumber:
		return in("v.number_value = " + arg(c.Number) + "::numeric")
	case TypeDate:
		return in("v.date_value = " + arg(c.Date.Format(time.DateOnly)) + "::date")
	case TypeDropdown:
		return in("v.option_id = " + arg(c.Option))
	case TypeCheckbox:
		if c.Bool {
			return in("v.bool_value")
		}
		// Unticked: no value, or a stored false.
		return "NOT EXISTS (SELECT 1 FROM custom_field_values AS v WHERE v.issue_id = " + issueID +
			" AND v.field_id = " + arg(c.FieldID) + " AND v.bool_value)"
	}
	return "false"
}
