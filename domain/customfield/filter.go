package customfield

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

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
	defs := make([]Definition, len(rows))
	for i, r := range rows {
		defs[i] = Definition{ID: r.ID, Name: r.Name, Type: r.Type}
	}
	return ResolveWith(defs, filters)
}

// ResolveWith is Resolve over fields already read (their ids, names and types; any
// other fields of the project may be among them).
func ResolveWith(fields []Definition, filters []Filter) ([]Condition, error) {
	if len(filters) == 0 {
		return nil, nil
	}
	defs := make(map[uuid.UUID]*Definition, len(fields))
	for i := range fields {
		defs[fields[i].ID] = &fields[i]
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
			if f.Value == "" || utf8.RuneCountInString(f.Value) > MaxFilterText {
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

// Terms is conds as one containment in the issue_filter_terms row aliased t (migration
// 0029) and true, when every condition is an equality SQL would put in custom_terms;
// "" and false when there is none or any other (a TEXT substring, an unticked
// CHECKBOX), which only the issue row answers. Each term is the field id's 16 bytes
// and the value as the migration's trigger writes it: an option id's 16 bytes, 1 for
// ticked, the date as YYYY-MM-DD, the number through trim_scale (in SQL, so 7.50
// finds 7.5). The array is built once per execution, in a sub-select.
func Terms(conds []Condition, t string, arg func(any) string) (string, bool) {
	if len(conds) == 0 {
		return "", false
	}
	// Checked before any argument is added: an argument of a term given up on would be
	// a parameter the statement never uses, which Postgres cannot type.
	for _, c := range conds {
		switch c.Type {
		case TypeNumber, TypeDate, TypeDropdown:
		case TypeCheckbox:
			if !c.Bool {
				return "", false
			}
		default:
			return "", false
		}
	}
	terms := make([]string, 0, len(conds))
	for _, c := range conds {
		term := make([]byte, len(c.FieldID), 32)
		copy(term, c.FieldID[:])
		switch c.Type {
		case TypeNumber:
			terms = append(terms, arg(term)+"::bytea || convert_to(trim_scale("+arg(c.Number)+"::numeric)::text, 'UTF8')")
			continue
		case TypeDate:
			term = append(term, c.Date.Format(time.DateOnly)...)
		case TypeDropdown:
			term = append(term, c.Option[:]...)
		case TypeCheckbox:
			term = append(term, 1)
		}
		terms = append(terms, arg(term)+"::bytea")
	}
	return t + ".terms @> (SELECT ARRAY[" + strings.Join(terms, ", ") + "])", true
}

// SQL is the conditions on the issue row aliased issue, joined by AND ("" for none),
// answered from indexes, never by reading every issue's values. The equalities
// (NUMBER, DATE, DROPDOWN, ticked CHECKBOX) are together one containment in the row's
// custom_terms, which its GIN index answers exactly and in one scan however many there
// are (migration 0028); a field's TEXT substrings are one search of the values'
// trigram index, all of them on the field's value in one sub-select; an unticked
// CHECKBOX is the absence of the ticked term, once per field. So the predicates grow
// with the fields named, not with the terms sent. arg adds a statement argument and
// returns its placeholder. Each term is written as migration 0028's trigger writes it
// (a number through trim_scale, so 7.50 finds 7.5), and the array is built once per
// execution, in a sub-select.
func SQL(conds []Condition, issue string, arg func(any) string) string {
	var out, terms []string
	term := func(c Condition, value string) string { return arg(c.FieldID.String()+"="+value) + "::text" }
	// A field's substrings in the order the field was first named, each once.
	var textFields []uuid.UUID
	texts := map[uuid.UUID][]string{}
	unticked := map[uuid.UUID]bool{}
	for _, c := range conds {
		switch c.Type {
		case TypeText:
			if _, seen := texts[c.FieldID]; !seen {
				textFields = append(textFields, c.FieldID)
			}
			if !slices.Contains(texts[c.FieldID], c.Text) {
				texts[c.FieldID] = append(texts[c.FieldID], c.Text)
			}
		case TypeNumber:
			terms = append(terms, arg(c.FieldID.String()+"=")+"::text || trim_scale("+arg(c.Number)+"::numeric)::text")
		case TypeDate:
			terms = append(terms, term(c, c.Date.Format(time.DateOnly)))
		case TypeDropdown:
			terms = append(terms, term(c, c.Option.String()))
		case TypeCheckbox:
			if c.Bool {
				terms = append(terms, term(c, "true"))
				continue
			}
			if unticked[c.FieldID] {
				continue
			}
			unticked[c.FieldID] = true
			// Unticked: no value, or a stored false.
			out = append(out, "NOT coalesce("+issue+".custom_terms @> (SELECT ARRAY["+term(c, "true")+"]), false)")
		default:
			out = append(out, "false")
		}
	}
	for _, id := range textFields {
		var like strings.Builder
		for _, text := range texts[id] {
			like.WriteString(" AND v.text_value ILIKE " + arg("%"+likeEscaper.Replace(text)+"%"))
		}
		out = append(out, issue+".id IN (SELECT v.issue_id FROM custom_field_values AS v WHERE v.field_id = "+arg(id)+like.String()+")")
	}
	if len(terms) > 0 {
		out = append(out, issue+".custom_terms @> (SELECT ARRAY["+strings.Join(terms, ", ")+"])")
	}
	return strings.Join(out, " AND ")
}
