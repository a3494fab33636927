// Package notify owns notifications: their types, the per-user opt-out preferences and,
// later, their creation from domain events.
package notify

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// Types in their documented order (docs/api-conventions.md#notifications); clients show
// unknown ones raw.
var Types = []string{
	"COMMENT_MENTION", "ISSUE_ASSIGNED", "AUTOMATION", "SLA_BREACHED",
	"COMMENT_ADDED", "STATUS_CHANGED", "SLA_ESCALATED", "INCIDENT", "SLA_RESPONSE_BREACHED",
}

// KnownType reports whether t is a notification type.
func KnownType(t string) bool {
	for _, k := range Types {
		if k == t {
			return true
		}
	}
	return false
}

// Preference is one type's channels; both are on unless switched off.
type Preference struct {
	Type  string
	InApp bool
	Email bool
}

// Preferences returns every type for user, in Types order.
func Preferences(ctx context.Context, db bun.IDB, user uuid.UUID) ([]Preference, error) {
	var rows []store.NotificationPreference
	if err := db.NewSelect().Model(&rows).Where("user_id = ?", user).Scan(ctx); err != nil {
		return nil, fmt.Errorf("read preferences: %w", err)
	}
	set := map[string]store.NotificationPreference{}
	for _, r := range rows {
		set[r.Type] = r
	}
	out := make([]Preference, 0, len(Types))
	for _, t := range Types {
		p := Preference{Type: t, InApp: true, Email: true}
		if r, ok := set[t]; ok {
			p.InApp, p.Email = r.InApp, r.Email
		}
		out = append(out, p)
	}
	return out, nil
}

// SetPreferences upserts the given subset; the types were checked at the edge.
func SetPreferences(ctx context.Context, db bun.IDB, user uuid.UUID, prefs []Preference) ([]Preference, error) {
	if len(prefs) > 0 {
		rows := make([]store.NotificationPreference, 0, len(prefs))
		for _, p := range prefs {
			rows = append(rows, store.NotificationPreference{UserID: user, Type: p.Type, InApp: p.InApp, Email: p.Email})
		}
		_, err := db.NewInsert().Model(&rows).
			On("CONFLICT (user_id, type) DO UPDATE").Set("in_app = EXCLUDED.in_app, email = EXCLUDED.email").Exec(ctx)
		if err != nil {
			return nil, fmt.Errorf("write preferences: %w", err)
		}
	}
	return Preferences(ctx, db, user)
}
