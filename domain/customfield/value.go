package customfield

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// InvalidError is a value its field cannot hold (CUSTOM_FIELD_INVALID naming the
// field), or a field id sent twice in one request (Type "").
type InvalidError struct {
	FieldID   uuid.UUID
	FieldName string
	Type      string
}

func (e *InvalidError) Error() string {
	if e.Type == "" {
		return fmt.Sprintf("custom field: %s is named twice", e.FieldID)
	}
	return fmt.Sprintf("custom field: invalid %s value for %q", e.Type, e.FieldName)
}

// RequiredError is a required field left without a value (CUSTOM_FIELD_REQUIRED naming
// the field).
type RequiredError struct {
	FieldID   uuid.UUID
	FieldName string
}

func (e *RequiredError) Error() string {
	return fmt.Sprintf("custom field: %q is required", e.FieldName)
}

// Input is one member of an issue's customFieldValues: Value nil removes the field's
// value. Values are strings whatever the type (docs/api-conventions.md#custom-fields).
type Input struct {
	FieldID uuid.UUID
	Value   *string
}

// Value is what an issue holds for one field: nothing (Set false), or the one member of
// the field's type. Number is the decimal in its canonical form (no sign for positive
// numbers, no leading zeros, no trailing fractional zeros), as numeric's trim_scale
// writes it.
type Value struct {
	Set         bool
	Text        *string
	Number      *string
	Date        *time.Time
	Bool        *bool
	OptionID    *uuid.UUID
	OptionLabel *string
}

// FieldValue is one field of the project with the value an issue holds for it: issues
// show one per field, unset ones included.
type FieldValue struct {
	Field *Definition
	Value
}

// Display is the value as people read it ("" when unset): the text, the number, the
// date as YYYY-MM-DD, "true"/"false", the option's label.
func (v Value) Display() string {
	switch {
	case !v.Set:
		return ""
	case v.OptionLabel != nil:
		return *v.OptionLabel
	}
	return v.Raw()
}

// Raw is the value as machines compare it ("" when unset): as Display, but the
// option's id for a DROPDOWN.
func (v Value) Raw() string {
	switch {
	case !v.Set:
		return ""
	case v.Text != nil:
		return *v.Text
	case v.Number != nil:
		return *v.Number
	case v.Date != nil:
		return v.Date.Format(time.DateOnly)
	case v.Bool != nil:
		return strconv.FormatBool(*v.Bool)
	case v.OptionID != nil:
		return v.OptionID.String()
	}
	return ""
}

// numberPattern is a plain decimal: an optional sign, digits with an optional fraction.
// No exponent, no NaN or infinity: people type numbers, not floats.
var numberPattern = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)

// Parse reads an input string as a value of d. Blank text is no value (Set false), as
// an empty text box is in any tracker.
func (d *Definition) Parse(s string) (Value, error) {
	invalid := &InvalidError{FieldID: d.ID, FieldName: d.Name, Type: d.Type}
	switch d.Type {
	case TypeText:
		if strings.TrimSpace(s) == "" {
			return Value{}, nil
		}
		if utf8.RuneCountInString(s) > MaxText || !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return Value{}, invalid
		}
		return Value{Set: true, Text: &s}, nil
	case TypeNumber:
		n, ok := canonicalNumber(s)
		if !ok {
			return Value{}, invalid
		}
		return Value{Set: true, Number: &n}, nil
	case TypeDate:
		t, err := time.Parse(time.DateOnly, s)
		if err != nil || t.Year() < 1 {
			return Value{}, invalid
		}
		return Value{Set: true, Date: &t}, nil
	case TypeCheckbox:
		b, ok := map[string]bool{"true": true, "false": false}[s]
		if !ok {
			return Value{}, invalid
		}
		return Value{Set: true, Bool: &b}, nil
	case TypeDropdown:
		id, err := uuid.Parse(s)
		if err != nil || len(s) != 36 {
			return Value{}, invalid
		}
		o := d.option(id)
		if o == nil {
			return Value{}, invalid
		}
		return Value{Set: true, OptionID: &o.ID, OptionLabel: &o.Label}, nil
	}
	return Value{}, invalid
}

// canonicalNumber checks a decimal and writes it as Postgres writes trim_scale(numeric):
// "+007.50" is "7.5", "-0" is "0", ".5" is "0.5".
func canonicalNumber(s string) (string, bool) {
	if len(s) > MaxNumber || !numberPattern.MatchString(s) {
		return "", false
	}
	neg := s[0] == '-'
	s = strings.TrimLeft(s, "+-")
	whole, frac, _ := strings.Cut(s, ".")
	whole = strings.TrimLeft(whole, "0")
	frac = strings.TrimRight(frac, "0")
	if whole == "" {
		whole = "0"
	}
	out := whole
	if frac != "" {
		out += "." + frac
	}
	if neg && out != "0" {
		out = "-" + out
	}
	return out, true
}

// equal reports whether two values of one field are the same.
func (v Value) equal(o Value) bool {
	return v.Set == o.Set && v.Raw() == o.Raw()
}
