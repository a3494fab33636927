package notify

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/jobs"
)

// rcptSession refuses RCPT TO with code (0: accepts) and counts accepted messages.
type rcptSession struct {
	code int
	sent *atomic.Int32
}

func (s *rcptSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *rcptSession) Rcpt(string, *smtp.RcptOptions) error {
	if s.code != 0 {
		return &smtp.SMTPError{Code: s.code, Message: "no"}
	}
	return nil
}
func (s *rcptSession) Data(r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	s.sent.Add(1)
	return err
}
func (s *rcptSession) Reset()        {}
func (s *rcptSession) Logout() error { return nil }

// relay serves a go-smtp server on 127.0.0.1 answering RCPT with code.
func relay(t *testing.T, code int, sent *atomic.Int32) string {
	t.Helper()
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &rcptSession{code: code, sent: sent}, nil }))
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

func TestDeliverClassifiesRefusals(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msg := Mail{Subject: "s", Text: "t", MessageID: "x@y", Date: time.Now()}.Bytes()

	var sent atomic.Int32
	m := NewMailer(nil, relay(t, 0, &sent), "", "")
	require.NoError(t, m.deliver(ctx, m.from.Address, "a@example.com", msg))
	require.EqualValues(t, 1, sent.Load())
	require.Equal(t, DefaultFrom, m.from.Address)

	// 5xx is permanent, 4xx is worth another attempt.
	m = NewMailer(nil, relay(t, 550, &sent), "", "")
	err := m.deliver(ctx, m.from.Address, "a@example.com", msg)
	require.ErrorIs(t, err, errRejected)
	require.True(t, Permanent(err))
	m = NewMailer(nil, relay(t, 451, &sent), "", "")
	err = m.deliver(ctx, m.from.Address, "a@example.com", msg)
	require.Error(t, err)
	require.False(t, errors.Is(err, errRejected))
	require.False(t, Permanent(err))
	require.EqualValues(t, 1, sent.Load())

	// An envelope address with a line break never reaches the wire.
	m = NewMailer(nil, relay(t, 0, &sent), "", "")
	require.Error(t, m.deliver(ctx, m.from.Address, "a@example.com\r\nRCPT TO:<b@example.com>", msg))
	require.EqualValues(t, 1, sent.Load())

	// No relay, or a malformed sender, fails before any I/O.
	err = NewMailer(nil, "", "", "").Send(ctx, mailJob())
	require.ErrorIs(t, err, errNoRelay)
	require.True(t, Permanent(err))
	require.ErrorContains(t, NewMailer(nil, "127.0.0.1:1", "not an address", "").Send(ctx, mailJob()), "TW_SMTP_FROM")
}

func mailJob() jobs.MailSend { return jobs.MailSend{Type: TypeIssueAssigned, Lang: "en"} }
