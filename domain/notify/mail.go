package notify

import (
	"bytes"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"time"

	"github.com/taskweave/taskweave/domain/locale"
)

// DefaultFrom is the sender when TW_SMTP_FROM is empty.
const DefaultFrom = "taskweave@localhost"

// Mail is one notification e-mail, its text already in the recipient's language.
type Mail struct {
	From    mail.Address
	To      mail.Address
	Subject string
	// Text is the plain-text body; line ends may be \n, they go out as CRLF.
	Text string
	// MessageID is the id part of Message-ID, without the angle brackets; the
	// notification's id makes it stable, so a resent mail can be recognized.
	MessageID string
	Date      time.Time
	// Type is the notification type, sent as X-Taskweave-Notification-Type so readers
	// can filter.
	Type string
}

// MailText is the body of a notification e-mail: greeting, the notification's body, the
// absolute link, and a footer saying why it came and how to stop it.
func MailText(lang, name, body, url string) string {
	return mailText(lang, name, body, url, "mail.footer")
}

// mailText is MailText with the footer of key: a digest's says why digests come.
func mailText(lang, name, body, url, footer string) string {
	return locale.T(lang, "mail.greeting", "name", oneLine(name)) + "\n\n" +
		body + "\n\n" +
		locale.T(lang, "mail.open", "url", url) + "\n\n" +
		"-- \n" + locale.T(lang, footer) + "\n"
}

// Bytes renders the message (RFC 5322, MIME text/plain in UTF-8, quoted-printable).
// Every header value loses CR and LF first, so nothing a user typed (a display name,
// an issue title in the subject) can add a header; non-ASCII words are RFC 2047
// encoded.
func (m Mail) Bytes() []byte {
	var b bytes.Buffer
	header := func(name, value string) {
		b.WriteString(name)
		b.WriteString(": ")
		b.WriteString(oneLine(value))
		b.WriteString("\r\n")
	}
	header("From", address(m.From))
	header("To", address(m.To))
	header("Subject", mime.QEncoding.Encode("utf-8", oneLine(m.Subject)))
	header("Date", m.Date.Format(time.RFC1123Z))
	header("Message-ID", "<"+m.MessageID+">")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=UTF-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	// RFC 3834: vacation responders must not answer a generated message.
	header("Auto-Submitted", "auto-generated")
	if m.Type != "" {
		header("X-Taskweave-Notification-Type", m.Type)
	}
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	// The writer turns every line end into CRLF and keeps lines below 76 characters.
	_, _ = qp.Write([]byte(strings.ReplaceAll(m.Text, "\r\n", "\n")))
	_ = qp.Close()
	return b.Bytes()
}

// address renders an address with its name, cleaned of line breaks and encoded per
// RFC 2047 when not ASCII.
func address(a mail.Address) string {
	a.Name, a.Address = oneLine(a.Name), oneLine(a.Address)
	return a.String()
}

// oneLine replaces CR, LF and other control characters by spaces, so a value can never
// end a header line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
