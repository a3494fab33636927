package apitest

import (
	"bufio"
	"bytes"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"sync"
	"testing"
	"time"

	smtp "github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"
)

// SMTPMail is one message the test SMTP server accepted.
type SMTPMail struct {
	From string
	To   []string
	Data []byte
}

// SMTPRecorder is a real SMTP server on 127.0.0.1 (go-smtp) whose backend records
// every envelope and message.
type SMTPRecorder struct {
	Addr string
	mu   sync.Mutex
	got  []SMTPMail
}

// NewSMTPRecorder starts a recorder until the test ends.
func NewSMTPRecorder(t testing.TB) *SMTPRecorder {
	t.Helper()
	rec := &SMTPRecorder{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &smtpSession{rec: rec}, nil }))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.ErrorLog = apitestLogger{t}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	rec.Addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return rec
}

// Mails is what arrived so far.
func (r *SMTPRecorder) Mails() []SMTPMail {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]SMTPMail(nil), r.got...)
}

// Wait returns the mails once n arrived.
func (r *SMTPRecorder) Wait(t testing.TB, n int) []SMTPMail {
	t.Helper()
	Eventually(t, 15*time.Second, func() bool { return len(r.Mails()) >= n }, "mails arrived")
	return r.Mails()
}

type smtpSession struct {
	rec  *SMTPRecorder
	From string
	To   []string
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error { s.From = from; return nil }

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error { s.To = append(s.To, to); return nil }

func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.rec.mu.Lock()
	s.rec.got = append(s.rec.got, SMTPMail{From: s.From, To: s.To, Data: b})
	s.rec.mu.Unlock()
	return nil
}

func (s *smtpSession) Reset() { s.From, s.To = "", nil }

func (s *smtpSession) Logout() error { return nil }

// apitestLogger sends the SMTP server's errors to the test log.
type apitestLogger struct{ t testing.TB }

func (l apitestLogger) Printf(format string, v ...any) { l.t.Logf("smtp server: "+format, v...) }

func (l apitestLogger) Println(v ...any) { l.t.Log(append([]any{"smtp server:"}, v...)...) }

// ParsedMail is a received mail's headers and decoded text.
type ParsedMail struct {
	Header  mail.Header
	Subject string
	Text    string
}

// ParseMail decodes m's headers and text.
func ParseMail(t testing.TB, m SMTPMail) ParsedMail {
	t.Helper()
	msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(m.Data)))
	require.NoError(t, err)
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	require.NoError(t, err)
	require.Equal(t, "quoted-printable", msg.Header.Get("Content-Transfer-Encoding"))
	text, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	require.NoError(t, err)
	return ParsedMail{Header: msg.Header, Subject: subject, Text: string(text)}
}
