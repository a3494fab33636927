package notify

import (
	"context"
	"net/mail"

	"github.com/google/uuid"
)

// SendTo delivers one e-mail to an address that belongs to no user (a service-desk
// ticket's sender), its text already rendered; id makes the Message-ID. It fails as
// Send does: Permanent errors when no relay is configured or the relay refuses.
func (m *Mailer) SendTo(ctx context.Context, id uuid.UUID, to, subject, text, typ string) error {
	if m.addr == "" {
		return errNoRelay
	}
	if m.fromErr != nil {
		return m.fromErr
	}
	msg := Mail{From: m.from, To: mail.Address{Address: to}, Subject: subject, Text: text,
		MessageID: messageID(id, m.from.Address), Date: m.now(), Type: typ}
	return m.deliver(ctx, m.from.Address, to, msg.Bytes())
}
