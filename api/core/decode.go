package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/mail"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/taskweave/taskweave/domain/weblink"
)

// DecodeJSON reads a JSON object into dst. Malformed JSON, anything but an object, and a
// member of the wrong type are BAD_REQUEST; unknown members are ignored (a strict body,
// Body.Decode, checks them after).
func DecodeJSON(body []byte, dst any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return BadRequest("MALFORMED_JSON")
	}
	if err := json.Unmarshal(trimmed, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return BadRequest("WRONG_TYPE", "field", te.Field)
		}
		return BadRequest("MALFORMED_JSON")
	}
	// Postgres text cannot hold NUL: refuse it here, naming the member, rather than fail
	// in SQL. Only bodies that spell the escape pay for the second decode.
	if bytes.Contains(trimmed, []byte(`\u0000`)) {
		var generic any
		if err := json.Unmarshal(trimmed, &generic); err == nil {
			var f Fields
			findNUL(generic, "", &f)
			if len(f) > 0 {
				e := f.Err().(*Error)
				e.Reason = "NUL_CHARACTER"
				return e
			}
		}
	}
	return nil
}

// findNUL records every string (or object key) holding a NUL character, by member path.
func findNUL(v any, path string, f *Fields) {
	switch x := v.(type) {
	case string:
		if strings.ContainsRune(x, 0) {
			f.Add(strings.TrimPrefix(path, "."), "NUL", "field.NUL")
		}
	case map[string]any:
		for k, e := range x {
			if strings.ContainsRune(k, 0) {
				f.Add(strings.TrimPrefix(path, "."), "NUL", "field.NUL")
				continue
			}
			findNUL(e, path+"."+k, f)
		}
	case []any:
		for i, e := range x {
			findNUL(e, path+"["+strconv.Itoa(i)+"]", f)
		}
	}
}

// DecodeOptionalJSON accepts an empty body as "{}" for calls whose body is optional.
func DecodeOptionalJSON(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return DecodeJSON(body, dst)
}

// Required is the BAD_REQUEST for an absent (or null) required member.
func Required(field string) error { return BadRequest("MISSING_FIELD", "field", field) }

// Fields collects constraint failures of present members into one VALIDATION_ERROR.
type Fields []FieldError

// Add records that field broke a constraint: code, and the message key with its
// arguments.
func (f *Fields) Add(field, code, key string, args ...string) {
	*f = append(*f, FieldError{Field: field, Code: code, Key: key, Args: args})
}

// Text checks a present string: not blank (when notBlank) and at most max characters
// (max 0: no limit). NUL characters were already refused by DecodeJSON.
func (f *Fields) Text(field, v string, notBlank bool, max int) {
	switch {
	case notBlank && strings.TrimSpace(v) == "":
		f.Add(field, "BLANK", "field.BLANK")
	case max > 0 && utf8.RuneCountInString(v) > max:
		f.Add(field, "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(max))
	}
}

// Link checks a present, non-empty link: an absolute http or https URL (weblink.Valid).
func (f *Fields) Link(field, v string) {
	if !weblink.Valid(v) {
		f.Add(field, "URL", "field.HTTP_URL")
	}
}

// Email checks an e-mail address: not blank, at most MaxEmail characters, one address.
func (f *Fields) Email(field, v string) {
	v = strings.TrimSpace(v)
	if v == "" {
		f.Add(field, "BLANK", "field.BLANK")
		return
	}
	if utf8.RuneCountInString(v) > MaxEmail {
		f.Add(field, "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(MaxEmail))
		return
	}
	a, err := mail.ParseAddress(v)
	at := strings.LastIndexByte(v, '@')
	if err != nil || a.Address != v || at < 1 || at == len(v)-1 {
		f.Add(field, "EMAIL", "field.EMAIL")
	}
}

// Password checks the register and password-change rule: MinPassword to MaxPassword
// characters, not all whitespace.
func (f *Fields) Password(field, v string) {
	n := utf8.RuneCountInString(v)
	switch {
	case strings.TrimFunc(v, unicode.IsSpace) == "":
		f.Add(field, "WHITESPACE", "field.WHITESPACE")
	case n < MinPassword:
		f.Add(field, "LENGTH", "field.TOO_SHORT", "min", strconv.Itoa(MinPassword))
	case n > MaxPassword:
		f.Add(field, "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(MaxPassword))
	}
}

// Err is the VALIDATION_ERROR naming every field recorded, or nil when none was.
func (f Fields) Err() error {
	if len(f) == 0 {
		return nil
	}
	return &Error{Status: 400, Code: "VALIDATION_ERROR", Key: "error.VALIDATION_ERROR", Fields: f}
}

// Instant formats a timestamp as RFC 3339 UTC with Z.
func Instant(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// InstantPtr is Instant of t, or nil.
func InstantPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Instant(*t)
	return &s
}
