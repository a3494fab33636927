package workflow

import (
	"encoding/json"
	"fmt"
	"slices"
)

// GuardRoles are the role names a ROLE_RESTRICTION guard can list: the project roles
// and NONE for an actor without a member row.
var GuardRoles = []string{"ADMIN", "MEMBER", "VIEWER", "NONE"}

// IsGuardType reports whether t is one of the two guard kinds.
func IsGuardType(t string) bool { return t == GuardRequiredField || t == GuardRoleRestriction }

// IsGuardField reports whether a REQUIRED_FIELD guard can check the issue field f.
func IsGuardField(f string) bool { return slices.Contains(GuardFields, f) }

// IsGuardRole reports whether r may appear in a ROLE_RESTRICTION guard.
func IsGuardRole(r string) bool { return slices.Contains(GuardRoles, r) }

// requiredFieldJSON and roleRestrictionJSON are the stored shapes of the two kinds:
// each carries only its own member, and roles is always a list.
type requiredFieldJSON struct {
	Type  string `json:"type"`
	Field string `json:"field"`
}

type roleRestrictionJSON struct {
	Type  string   `json:"type"`
	Roles []string `json:"roles"`
}

// EncodeGuards turns validated guards into the stored JSON array; no guards is nil
// (SQL NULL, "no guards" on the wire) rather than an empty array.
func EncodeGuards(guards []Guard) (json.RawMessage, error) {
	if len(guards) == 0 {
		return nil, nil
	}
	out := make([]any, 0, len(guards))
	for _, g := range guards {
		switch g.Type {
		case GuardRequiredField:
			out = append(out, requiredFieldJSON{Type: g.Type, Field: g.Field})
		case GuardRoleRestriction:
			roles := g.Roles
			if roles == nil {
				roles = []string{}
			}
			out = append(out, roleRestrictionJSON{Type: g.Type, Roles: roles})
		default:
			return nil, fmt.Errorf("encode guards: unknown guard type %q", g.Type)
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode guards: %w", err)
	}
	return raw, nil
}
