package webhook

import (
	"encoding/json"
	"fmt"
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

// body is the CONTRACT §11 delivery body. Project is set for ping only.
type body struct {
	Event      string          `json:"event"`
	Project    string          `json:"project,omitempty"`
	ProjectID  uuid.UUID       `json:"projectId"`
	ProjectKey string          `json:"projectKey"`
	Data       json.RawMessage `json:"data"`
	Timestamp  string          `json:"timestamp"`
	ID         uuid.UUID       `json:"id"`
}

// encoder renders one message's body for each of its deliveries: the data is encoded
// once, only the delivery id differs.
type encoder struct {
	b body
}

func newEncoder(m Message) (*encoder, error) {
	data := m.Data
	if data == nil {
		data = struct{}{}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("webhook data for %s: %w", m.Type, err)
	}
	at := m.At
	if at.IsZero() {
		at = time.Now()
	}
	e := &encoder{b: body{Event: m.Type, ProjectID: m.ProjectID, ProjectKey: m.ProjectKey, Data: raw,
		Timestamp: at.UTC().Format(time.RFC3339Nano)}}
	if m.Type == EventPing {
		e.b.Project = m.ProjectKey
	}
	return e, nil
}

// encode renders the body of delivery id.
func (e *encoder) encode(id uuid.UUID) (string, error) {
	b := e.b
	b.ID = id
	raw, err := json.Marshal(b)
	if err != nil {
		return "", fmt.Errorf("webhook body: %w", err)
	}
	return string(raw), nil
}
