package core

import (
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/issue"
)

// ParseID reads an id a client sent, in a path, a query parameter or a body member: the
// canonical 36-character hyphenated form only, in either case. uuid.Parse alone also
// takes 32 bare hex digits, braces and a urn:uuid: prefix; every id goes through here so
// an id is valid or not whatever part of the request carries it. A malformed one is
// BAD_REQUEST INVALID_UUID naming field.
func ParseID(field, s string) (uuid.UUID, error) {
	if len(s) == 36 {
		if id, err := uuid.Parse(s); err == nil {
			return id, nil
		}
	}
	return uuid.Nil, BadRequest("INVALID_UUID", "field", field)
}

// PathUUID parses the id path parameter name.
func PathUUID(c *fiber.Ctx, name string) (uuid.UUID, error) { return ParseID(name, c.Params(name)) }

// QueryID parses the value v of the optional id query parameter name; absent (empty)
// is nil.
func QueryID(name, v string) (*uuid.UUID, error) {
	if v == "" {
		return nil, nil
	}
	id, err := ParseID(name, v)
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// OptionalID parses an optional id body member; absent (or null) is nil.
func OptionalID(field string, s *string) (*uuid.UUID, error) {
	if s == nil {
		return nil, nil
	}
	id, err := ParseID(field, *s)
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// IssueMember parses the optional body member field that names an issue, by its id or,
// as paths do, by its key (DEMO-3): one of id and key is set when s is. Anything else
// is 400 INVALID_UUID.
func IssueMember(field string, s *string) (id *uuid.UUID, key string, err error) {
	if s == nil {
		return nil, "", nil
	}
	ref, ok := issue.ParseRef(*s)
	switch {
	case !ok:
		return nil, "", BadRequest("INVALID_UUID", "field", field)
	case ref.Key != "":
		return nil, ref.Key, nil
	}
	return &ref.ID, "", nil
}

// ParseIDs parses a list of ids sent as the body member field.
func ParseIDs(field string, ss []string) ([]uuid.UUID, error) {
	out := make([]uuid.UUID, 0, len(ss))
	for _, s := range ss {
		id, err := ParseID(field, s)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}
