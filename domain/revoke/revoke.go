// Package revoke tells every API process, through Postgres, that someone's access may
// have shrunk: a member left a project or an organization, a project changed
// organization, a user was deactivated or deleted, or one of their login sessions ended
// (logout, password change, refresh-token reuse, sign-out everywhere). The notice is a pg_notify on the
// realtime channel, sent on the transaction of the change, so every replica's realtime
// listener receives it right after the commit (and never for a rollback); the STOMP hub
// then checks the affected live sessions against the database again and drops what they
// may no longer follow (docs/api-conventions.md#real-time).
//
// The package imports nothing of ours, so any domain package may call it.
package revoke

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Channel is realtime.Channel: the notices travel on the connection every API process
// already LISTENs on (a test keeps the two equal).
const Channel = "taskweave_realtime"

// The internal destinations of notices. Clients cannot subscribe to them: the STOMP
// endpoint accepts only project topics and the user's own queue.
const (
	usersPrefix    = "/internal/access/users/"
	projectsPrefix = "/internal/access/projects/"
)

// notice is realtime.Message's wire form, with an empty body.
type notice struct {
	Destination string          `json:"d"`
	Body        json.RawMessage `json:"b"`
}

// Users announces that each user's access may have shrunk; send it on the change's
// transaction.
func Users(ctx context.Context, db bun.IDB, ids ...uuid.UUID) error {
	for _, id := range ids {
		if err := send(ctx, db, usersPrefix+id.String()); err != nil {
			return err
		}
	}
	return nil
}

// Project announces that access to the project may have shrunk for any of its
// followers; send it on the change's transaction.
func Project(ctx context.Context, db bun.IDB, key string) error {
	return send(ctx, db, projectsPrefix+key)
}

func send(ctx context.Context, db bun.IDB, dest string) error {
	payload, err := json.Marshal(notice{Destination: dest, Body: json.RawMessage("{}")})
	if err != nil {
		return fmt.Errorf("revocation notice %s: %w", dest, err)
	}
	if _, err := db.ExecContext(ctx, "SELECT pg_notify(?, ?)", Channel, string(payload)); err != nil {
		return fmt.Errorf("revocation notice %s: %w", dest, err)
	}
	return nil
}

// Notice is a parsed revocation notice: a user's access or a project's followers.
type Notice struct {
	User       uuid.UUID // uuid.Nil for a project notice
	ProjectKey string    // "" for a user notice
}

// Parse reads a realtime destination; ok is false for anything but a revocation notice.
func Parse(destination string) (n Notice, ok bool) {
	switch {
	case strings.HasPrefix(destination, usersPrefix):
		id, err := uuid.Parse(strings.TrimPrefix(destination, usersPrefix))
		return Notice{User: id}, err == nil
	case strings.HasPrefix(destination, projectsPrefix):
		key := strings.TrimPrefix(destination, projectsPrefix)
		return Notice{ProjectKey: key}, key != ""
	}
	return Notice{}, false
}
