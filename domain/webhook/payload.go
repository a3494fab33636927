package webhook

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Message is one domain event as webhooks see it: its wire type and data, and the
// project whose subscribers get it. Mappers (see Register) turn domain events into it.
type Message struct {
	Type       string
	ProjectID  uuid.UUID
	ProjectKey string
	// IssueID, when the event is about an issue, goes into the job args so support
	// staff can find an issue's deliveries.
	IssueID *uuid.UUID
	// Data is the event's `data` member; it is marshalled once for every subscriber.
	Data any
	// At is when the event happened (the body's timestamp); zero means now.
	At time.Time
}

// body is the delivery body (docs/api-conventions.md#events-and-webhooks). Project is set
// for ping only.
type body struct {
	Event      string          `json:"event"`
	Project    string          `json:"project,omitempty"`
	ProjectID  uuid.UUID       `json:"projectId"`
	ProjectKey string          `json:"projectKey"`
	Data       json.RawMessage `json:"data"`
	Timestamp  string          `json:"timestamp"`
	ID         uuid.UUID       `json:"id"`
}

// bodyTail ends every body: the delivery id is its last member, so a body is its head
// (everything up to the id's opening quote), the id, and bodyTail.
const bodyTail = `"}`

// zeroID is how the id placeholder encodes when the head is cut from a full body.
var zeroID = uuid.Nil.String() + bodyTail

// bodyHead renders m's body up to its delivery id: the data is encoded once per
// message, and each delivery completes the head with its own id.
func bodyHead(m Message) (string, error) {
	data := m.Data
	if data == nil {
		data = struct{}{}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return "", fmt.Errorf("webhook data for %s: %w", m.Type, err)
	}
	at := m.At
	if at.IsZero() {
		at = time.Now()
	}
	b := body{Event: m.Type, ProjectID: m.ProjectID, ProjectKey: m.ProjectKey, Data: raw,
		Timestamp: at.UTC().Format(time.RFC3339Nano)}
	if m.Type == EventPing {
		b.Project = m.ProjectKey
	}
	full, err := json.Marshal(b)
	if err != nil {
		return "", fmt.Errorf("webhook body: %w", err)
	}
	head, ok := strings.CutSuffix(string(full), zeroID)
	if !ok {
		return "", fmt.Errorf("webhook body of %s does not end with its id", m.Type)
	}
	return head, nil
}

// Body is m's delivery body with delivery id: the envelope every webhook body has.
func Body(m Message, id uuid.UUID) (string, error) {
	head, err := bodyHead(m)
	if err != nil {
		return "", err
	}
	return head + id.String() + bodyTail, nil
}
