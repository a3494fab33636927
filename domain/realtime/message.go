// Package realtime carries live messages (the board push, in-app notifications) from
// the transaction that causes them to every API process: a bus consumer publishes them
// with pg_notify on the event's transaction, so Postgres delivers them only after the
// commit and never for a rollback, and each API process LISTENs once and hands them to
// its local WebSocket subscribers.
package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Channel is the Postgres notification channel every API process listens on.
const Channel = "taskweave_realtime"

// MaxPayload is the largest notification payload sent. Postgres refuses payloads of
// 8000 bytes or more; the margin keeps a future header field from hitting the limit.
const MaxPayload = 7900

// errPayloadTooLarge means a message would not fit in one notification. The board
// messages are a few hundred bytes by construction; this guards against a new message
// kind growing past the limit silently: a server fault, never the client's.
var errPayloadTooLarge = errors.New("realtime: message too large for a notification")

// Message is one live message: the destination subscribers asked for and the JSON body
// they receive. User destinations are internal (UserDestination) and become the
// subscriber's /user/... destination on the way out.
type Message struct {
	Destination string          `json:"d"`
	Body        json.RawMessage `json:"b"`
}

// ProjectTopic is the destination of a project's board messages.
func ProjectTopic(projectKey string) string { return "/topic/projects/" + projectKey }

// userPrefix starts the internal destination of one user's queues; a STOMP client
// subscribes to /user/queue/... and the session maps it to its own user.
const userPrefix = "/user/"

// UserDestination is the internal destination of queue (for example
// "/queue/notifications") of one user; only that user's sessions receive it.
func UserDestination(userID uuid.UUID, queue string) string {
	return userPrefix + userID.String() + queue
}

// NotificationQueue is the user queue in-app notifications arrive on.
const NotificationQueue = "/queue/notifications"

// TaskQueue is the user queue the progress of the user's own tasks arrives on.
const TaskQueue = "/queue/tasks"

// IsUserDestination reports whether d is an internal user destination.
func IsUserDestination(d string) bool { return strings.HasPrefix(d, userPrefix) }

// Publish sends messages on db (a transaction: they are delivered when it commits).
func Publish(ctx context.Context, db bun.IDB, msgs ...Message) error {
	for _, m := range msgs {
		payload, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("realtime message for %s: %w", m.Destination, err)
		}
		if len(payload) > MaxPayload {
			return fmt.Errorf("%w: %d bytes for %s", errPayloadTooLarge, len(payload), m.Destination)
		}
		if _, err := db.ExecContext(ctx, "SELECT pg_notify(?, ?)", Channel, string(payload)); err != nil {
			return fmt.Errorf("notify %s: %w", m.Destination, err)
		}
	}
	return nil
}

// Decode parses a notification payload.
func Decode(payload string) (Message, error) {
	var m Message
	if err := json.Unmarshal([]byte(payload), &m); err != nil {
		return Message{}, fmt.Errorf("realtime payload: %w", err)
	}
	if m.Destination == "" || len(m.Body) == 0 {
		return Message{}, errors.New("realtime payload: destination or body missing")
	}
	return m, nil
}
