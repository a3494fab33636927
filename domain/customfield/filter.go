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

// SQL is the condition on the issue row aliased issue, answered from indexes, never by
// reading every issue's values: an equality (NUMBER, DATE, DROPDOWN, ticked CHECKBOX)
// is a containment in the row's custom_keys (the issues_custom_keys GIN index, which
// intersects any number of them in one scan; migration 0027), a TEXT substring a search
// of the values' trigram index. arg adds a statement argument and returns its
// placeholder. The compared JSON is built in SQL with the same casts the triggers
// write custom_keys with, so 1.50 finds 1.5 and a date is its ISO text.
func (c Condition) SQL(issue string, arg func(any) string) string {
	// The JSON is built once per execution (a sub-select, an InitPlan): as a bare
	// expression of parameters, Postgres built it again for every row it rechecked,
	// which doubled the cost of a filter matching a few thousand issues.
	contains := func(value string) string {
		return issue + ".custom_keys @> (SELECT jsonb_build_object(" + arg(c.FieldID.String()) + "::text, " + value + "))"
	}
	switch c.Type {
	case TypeText:
		return issue + ".id IN (SELECT v.issue_id FROM custom_field_values AS v WHERE v.field_id = " + arg(c.FieldID) +
			" AND v.text_value ILIKE " + arg("%"+likeEscaper.Replace(c.Text)+"%") + ")"
	case TypeNumber:
		return contains(arg(c.Number) + "::numeric")
	case TypeDate:
		return contains(arg(c.Date.Format(time.DateOnly)) + "::date")
	case TypeDropdown:
		return contains(arg(c.Option) + "::uuid")
	case TypeCheckbox:
		if c.Bool {
			return contains("true")
		}
		// Unticked: no value, or a stored false.
		return "NOT coalesce(" + contains("true") + ", false)"
	}
	return "false"
}
