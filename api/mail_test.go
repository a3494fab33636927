package api_test

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

	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/workers"
)

// smtpMail is one message the test SMTP server accepted.
type smtpMail struct {
	from string
	to   []string
	data []byte
}

// smtpRecorder is a real SMTP server on 127.0.0.1 (go-smtp) whose backend records
// every envelope and message.
type smtpRecorder struct {
	addr string
	mu   sync.Mutex
	got  []smtpMail
}

func newSMTPRecorder(t *testing.T) *smtpRecorder {
	t.Helper()
	rec := &smtpRecorder{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &smtpSession{rec: rec}, nil }))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.ErrorLog = apitestLogger{t}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	rec.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return rec
}

// mails is what arrived so far.
func (r *smtpRecorder) mails() []smtpMail {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]smtpMail(nil), r.got...)
}

// wait returns the mails once n arrived.
func (r *smtpRecorder) wait(t *testing.T, n int) []smtpMail {
	t.Helper()
	apitest.Eventually(t, 15*time.Second, func() bool { return len(r.mails()) >= n }, "mails arrived")
	return r.mails()
}

type smtpSession struct {
	rec  *smtpRecorder
	from string
	to   []string
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error { s.from = from; return nil }
func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error   { s.to = append(s.to, to); return nil }
func (s *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.rec.mu.Lock()
	s.rec.got = append(s.rec.got, smtpMail{from: s.from, to: s.to, data: b})
	s.rec.mu.Unlock()
	return nil
}
func (s *smtpSession) Reset()        { s.from, s.to = "", nil }
func (s *smtpSession) Logout() error { return nil }

// apitestLogger sends the SMTP server's errors to the test log.
type apitestLogger struct{ t *testing.T }

func (l apitestLogger) Printf(format string, v ...any) { l.t.Logf("smtp server: "+format, v...) }
func (l apitestLogger) Println(v ...any)               { l.t.Log(append([]any{"smtp server:"}, v...)...) }

// parsed is a received mail's headers and decoded text.
type parsedMail struct {
	header  mail.Header
	subject string
	text    string
}

func parseMail(t *testing.T, m smtpMail) parsedMail {
	t.Helper()
	msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(m.data)))
	require.NoError(t, err)
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	require.NoError(t, err)
	require.Equal(t, "quoted-printable", msg.Header.Get("Content-Transfer-Encoding"))
	text, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	require.NoError(t, err)
	return parsedMail{header: msg.Header, subject: subject, text: string(text)}
}

func TestNotificationMailOverSMTP(t *testing.T) {
	t.Parallel()
	rec := newSMTPRecorder(t)
	f := ntFixture(t, func(c *workers.Config) {
		c.Mail.Addr, c.Mail.From, c.BaseURL = rec.addr, "Taskweave <tw@example.com>", "https://tw.example/"
	})
	h := f.h
	ntSetLanguage(t, h, f.member, "de")
	ntPreference(t, h, f.member, "STATUS_CHANGED", true, false)

	// A German recipient gets a German mail with the absolute link.
	_, k1 := ntIssue(t, f, f.owner, "Größe prüfen", &f.member)
	got := rec.wait(t, 1)
	require.Len(t, got, 1)
	require.Equal(t, "tw@example.com", got[0].from)
	require.Equal(t, []string{f.member.Email}, got[0].to)
	m := parseMail(t, got[0])
	require.Equal(t, k1+" wurde Ihnen zugewiesen", m.subject)
	to, err := mail.ParseAddress(m.header.Get("To"))
	require.NoError(t, err)
	require.Equal(t, mail.Address{Name: "Mia", Address: f.member.Email}, *to)
	from, err := mail.ParseAddress(m.header.Get("From"))
	require.NoError(t, err)
	require.Equal(t, mail.Address{Name: "Taskweave", Address: "tw@example.com"}, *from)
	date, err := m.header.Date()
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), date, time.Minute)
	notification := ntFind(t, h, f.member, "ISSUE_ASSIGNED", k1)
	require.Equal(t, "<"+notification["id"].(string)+"@example.com>", m.header.Get("Message-ID"))
	require.Equal(t, "1.0", m.header.Get("MIME-Version"))
	require.Equal(t, "text/plain; charset=UTF-8", m.header.Get("Content-Type"))
	require.Contains(t, m.text, "Hallo Mia,\r\n\r\nOwner hat Ihnen "+k1+" „Größe prüfen“ zugewiesen.\r\n")
	require.Contains(t, m.text, "In Taskweave öffnen: https://tw.example/p/"+f.key+"/issues/"+k1+"\r\n")
	require.Contains(t, m.text, "Benachrichtigungseinstellungen")

	// The member switched STATUS_CHANGED e-mails off: the move is notified in-app, but
	// no mail job exists; the next mail, to the English-speaking viewer, is the second.
	ntPatch(t, f, f.owner, k1, map[string]any{"statusId": f.prog})
	ntDrain(t, h)
	ntFind(t, h, f.member, "STATUS_CHANGED", k1)
	require.Equal(t, 0, ntMailJobs(h, "STATUS_CHANGED"))
	_, k2 := ntIssue(t, f, f.owner, "Check size", &f.viewer)
	rec.wait(t, 2)
	ntDrain(t, h)
	got = rec.mails()
	require.Len(t, got, 2, "nothing but the two assignments was sent")
	require.Equal(t, []string{f.viewer.Email}, got[1].to)
	m = parseMail(t, got[1])
	require.Equal(t, k2+" was assigned to you", m.subject)
	require.Contains(t, m.text, "Hello Viv,\r\n\r\nOwner assigned "+k2+" “Check size” to you.\r\n")
	require.Contains(t, m.text, "Open in Taskweave: https://tw.example/p/"+f.key+"/issues/"+k2+"\r\n")
	require.Equal(t, 2, h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.mail' AND queue = 'mail' AND state = 'completed'"))
}
