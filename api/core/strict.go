package core

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
)

// Strict bodies (docs/api-conventions.md#strict-bodies). A request asking
// `Prefer: handling=strict` (RFC 7240) has every member of its JSON body checked: a
// member the request type does not read is 400 UNKNOWN_MEMBER, one the server assigns
// (an id, a timestamp, a member only a reply carries) 400 READ_ONLY_MEMBER, each naming
// the member by its path. Without the preference unknown members are ignored, as they
// always were.

// HeaderPreferenceApplied is RFC 7240's reply header.
const HeaderPreferenceApplied = "Preference-Applied"

// PreferenceStrict is the value of Prefer and Preference-Applied that asks for (and
// confirms) strict bodies.
const PreferenceStrict = "handling=strict"

// commonReadOnly are members the server assigns on every resource: read-only wherever a
// request type does not read them itself.
var commonReadOnly = []string{"id", "createdAt", "updatedAt"}

// PrefersStrict reads the request's Prefer headers (RFC 7240: comma-separated
// preferences, each token[=value] with ;parameters, the first of a name counting): true
// when handling is strict.
func PrefersStrict(c *fiber.Ctx) bool {
	var found bool
	strict := false
	c.Request().Header.VisitAll(func(k, v []byte) {
		if found || !strings.EqualFold(string(k), "Prefer") {
			return
		}
		for _, pref := range strings.Split(string(v), ",") {
			pref, _, _ = strings.Cut(pref, ";")
			name, value, _ := strings.Cut(pref, "=")
			if !strings.EqualFold(strings.TrimSpace(name), "handling") {
				continue
			}
			found = true
			strict = strings.EqualFold(strings.Trim(strings.TrimSpace(value), `"`), "strict")
			return
		}
	})
	return strict
}

// Body is a request's JSON body with the caller's handling preference.
type Body struct {
	JSON   []byte
	Strict bool
}

// BodyOf is c's body, strict when the request prefers handling=strict.
func BodyOf(c *fiber.Ctx) Body { return Body{JSON: c.Body(), Strict: PrefersStrict(c)} }

// Decode is DecodeJSON, and in a strict body the member check (CheckMembers) after.
func (b Body) Decode(dst any) error {
	if err := DecodeJSON(b.JSON, dst); err != nil {
		return err
	}
	if b.Strict {
		return CheckMembers(b.JSON, dst)
	}
	return nil
}

// DecodeOptional accepts an empty body as "{}" for calls whose body is optional.
func (b Body) DecodeOptional(dst any) error {
	if len(bytes.TrimSpace(b.JSON)) == 0 {
		return nil
	}
	return b.Decode(dst)
}

// Decode reads c's JSON body into dst (DecodeJSON), strictly when the request asks.
func Decode(c *fiber.Ctx, dst any) error { return BodyOf(c).Decode(dst) }

// DecodeOptional is Decode accepting an empty body as "{}".
func DecodeOptional(c *fiber.Ctx, dst any) error { return BodyOf(c).DecodeOptional(dst) }

// CheckMembers walks body (already decoded into dst without error) against dst's type:
// the first member, in path order, that no field reads is UNKNOWN_MEMBER, or
// READ_ONLY_MEMBER when the type declares it read-only. Objects of a struct type are
// checked member by member, arrays element by element; a member whose type is a map,
// an interface or raw JSON (custom field values, rule parameters, trigger payloads) is
// free-form here and checked by its own validation.
//
// A request type declares its read-only members once, with a blank field:
//
//	_ struct{} `readonly:"key,projectKey,statusName"`
//
// id, createdAt and updatedAt are read-only for every type that has no field of that
// name.
func CheckMembers(body []byte, dst any) error {
	t := reflect.TypeOf(dst)
	var bad []memberProblem
	checkMembers(json.RawMessage(bytes.TrimSpace(body)), t, "", &bad)
	if len(bad) == 0 {
		return nil
	}
	sort.Slice(bad, func(i, j int) bool { return bad[i].path < bad[j].path })
	p := bad[0]
	e := BadRequest("UNKNOWN_MEMBER", "field", p.path)
	if p.readOnly {
		e = BadRequest("READ_ONLY_MEMBER", "field", p.path)
	}
	e.Details = map[string]string{"field": p.path}
	return e
}

type memberProblem struct {
	path     string
	readOnly bool
}

func checkMembers(raw json.RawMessage, t reflect.Type, path string, bad *[]memberProblem) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return // null or not an object: the decode judged its type
		}
		info := structMembersOf(t)
		for name, v := range members {
			p := name
			if path != "" {
				p = path + "." + name
			}
			ft, ok := info.lookup(name)
			if !ok {
				*bad = append(*bad, memberProblem{path: p, readOnly: info.readOnly[name]})
				continue
			}
			checkMembers(v, ft, p, bad)
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return // []byte is a base64 string
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return
		}
		for i, v := range items {
			checkMembers(v, t.Elem(), path+"["+strconv.Itoa(i)+"]", bad)
		}
	}
}

var (
	rawMessageType  = reflect.TypeOf(json.RawMessage(nil))
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	structMembers   sync.Map // reflect.Type → *memberSet
)

// memberSet is what a struct type reads: its JSON member names (encoding/json's, so
// embedded structs' promoted fields count) and its read-only ones.
type memberSet struct {
	fields   map[string]reflect.Type
	readOnly map[string]bool
}

// lookup finds name as encoding/json does: exactly, else case-insensitively.
func (m *memberSet) lookup(name string) (reflect.Type, bool) {
	if t, ok := m.fields[name]; ok {
		return t, true
	}
	for k, t := range m.fields {
		if strings.EqualFold(k, name) {
			return t, true
		}
	}
	return nil, false
}

func structMembersOf(t reflect.Type) *memberSet {
	if m, ok := structMembers.Load(t); ok {
		return m.(*memberSet)
	}
	m := &memberSet{fields: map[string]reflect.Type{}, readOnly: map[string]bool{}}
	collectMembers(t, m)
	for _, name := range commonReadOnly {
		m.readOnly[name] = true
	}
	for name := range m.fields {
		delete(m.readOnly, name)
	}
	structMembers.Store(t, m)
	return m
}

func collectMembers(t reflect.Type, m *memberSet) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "_" {
			for _, name := range strings.Split(f.Tag.Get("readonly"), ",") {
				if name = strings.TrimSpace(name); name != "" {
					m.readOnly[name] = true
				}
			}
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectMembers(ft, m)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := m.fields[name]; !dup {
			m.fields[name] = f.Type
		}
	}
}
