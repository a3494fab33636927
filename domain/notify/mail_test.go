package notify_test

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/notify"
)

func TestMailBytesHeadersEncodingAndInjection(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 10, 7, 0, 0, time.UTC)
	m := notify.Mail{
		From: mail.Address{Name: "Taskweave", Address: "tw@example.com"},
		// A display name and a subject trying to smuggle in headers.
		To:        mail.Address{Name: "Jörg\r\nBcc: victim@example.com", Address: "joerg@example.com"},
		Subject:   "Größe prüfen\r\nBcc: victim@example.com",
		Text:      notify.MailText("de", "Jörg", "Anna hat Ihnen ABC-1 „Größe prüfen“ zugewiesen.", "https://tw.example/p/ABC/issues/ABC-1"),
		MessageID: "0b5c@example.com", Date: at, Type: "ISSUE_ASSIGNED",
	}
	raw := m.Bytes()
	head, _, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	require.True(t, ok)
	for _, line := range strings.Split(string(head), "\r\n") {
		require.NotContains(t, line, "\n")
		require.NotContains(t, line, "\r")
		require.False(t, strings.HasPrefix(strings.ToLower(line), "bcc:"), "no injected header: %q", line)
		require.Less(t, len(line), 998)
	}

	msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(raw)))
	require.NoError(t, err)
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	require.NoError(t, err)
	require.Equal(t, "Größe prüfen  Bcc: victim@example.com", subject, "line breaks became spaces")
	require.NotEqual(t, subject, msg.Header.Get("Subject"), "non-ASCII subject is RFC 2047 encoded")
	to, err := mail.ParseAddress(msg.Header.Get("To"))
	require.NoError(t, err)
	require.Equal(t, "joerg@example.com", to.Address)
	require.Equal(t, "Jörg  Bcc: victim@example.com", to.Name)
	from, err := mail.ParseAddress(msg.Header.Get("From"))
	require.NoError(t, err)
	require.Equal(t, mail.Address{Name: "Taskweave", Address: "tw@example.com"}, *from)
	date, err := msg.Header.Date()
	require.NoError(t, err)
	require.True(t, date.Equal(at))
	require.Equal(t, "<0b5c@example.com>", msg.Header.Get("Message-ID"))
	require.Equal(t, "1.0", msg.Header.Get("MIME-Version"))
	require.Equal(t, "text/plain; charset=UTF-8", msg.Header.Get("Content-Type"))
	require.Equal(t, "quoted-printable", msg.Header.Get("Content-Transfer-Encoding"))
	require.Equal(t, "auto-generated", msg.Header.Get("Auto-Submitted"))
	require.Equal(t, "ISSUE_ASSIGNED", msg.Header.Get("X-Taskweave-Notification-Type"))

	body, err := io.ReadAll(msg.Body)
	require.NoError(t, err)
	for _, line := range strings.Split(string(body), "\r\n") {
		require.LessOrEqual(t, len(line), 76, "quoted-printable lines stay short")
		require.NotContains(t, line, "\n", "every line ends in CRLF")
	}
	text, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(body)))
	require.NoError(t, err)
	require.Equal(t, "Hallo Jörg,\r\n\r\nAnna hat Ihnen ABC-1 „Größe prüfen“ zugewiesen.\r\n\r\n"+
		"In Taskweave öffnen: https://tw.example/p/ABC/issues/ABC-1\r\n\r\n-- \r\n"+
		"Sie erhalten diese E-Mail, weil E-Mail-Benachrichtigungen dieser Art in Ihrem Taskweave-Konto eingeschaltet sind. "+
		"Sie können sie in Ihren Benachrichtigungseinstellungen je Art abschalten.\r\n", string(text))
}
