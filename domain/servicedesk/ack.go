package servicedesk

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/locale"
)

// AckType is the X-Taskweave-Notification-Type of the acknowledgement e-mail.
const AckType = "TICKET_RECEIVED"

// Acknowledgement is the e-mail confirming a ticket to its sender.
type Acknowledgement struct {
	To      string
	Subject string
	Text    string
}

// Acknowledgement renders the acknowledgement of ticket issueID, in English (the sender
// has no account, so no stored language): its subject carries the key in brackets, so a
// reply comes back as a comment on the ticket. Nil when the ticket or its sender is gone.
func (s *Service) Acknowledgement(ctx context.Context, issueID uuid.UUID) (*Acknowledgement, error) {
	var row struct {
		Sender *string `bun:"sender_email"`
		Key    string  `bun:"key"`
		Title  string  `bun:"title"`
	}
	err := s.db.NewRaw(`SELECT t.sender_email, i.key, i.title FROM service_desk_tickets AS t
		JOIN issues AS i ON i.id = t.issue_id WHERE t.issue_id = ?`, issueID).Scan(ctx, &row)
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ticket %s: %w", issueID, err)
	}
	if row.Sender == nil {
		return nil, nil
	}
	args := []string{"issueKey", row.Key, "title", row.Title}
	return &Acknowledgement{To: *row.Sender, Subject: locale.T(locale.English, "mail.ticket.subject", args...),
		Text: locale.T(locale.English, "mail.ticket.body", args...) + "\n"}, nil
}
