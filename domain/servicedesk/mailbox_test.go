package servicedesk_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/servicedesk"
)

// mailServer is an in-memory IMAP server (go-imap's imapmemserver) on a local port with
// one account whose INBOX the test fills.
type mailServer struct {
	addr string
	user *imapmemserver.User
}

func newMailServer(t *testing.T) *mailServer {
	t.Helper()
	mem := imapmemserver.New()
	user := imapmemserver.NewUser("desk", "secret")
	require.NoError(t, user.Create("INBOX", nil))
	mem.AddUser(user)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		InsecureAuth: true,
		Logger:       slogLogger{},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &mailServer{addr: ln.Addr().String(), user: user}
}

type slogLogger struct{}

func (slogLogger) Printf(string, ...any) {}

// deliver appends a raw message to INBOX, unseen.
func (m *mailServer) deliver(t *testing.T, raw string) {
	t.Helper()
	_, err := m.user.Append("INBOX", bytes.NewReader([]byte(strings.ReplaceAll(raw, "\n", "\r\n"))), &imap.AppendOptions{})
	require.NoError(t, err)
}

// unseen counts INBOX's unseen messages through a real client.
func (m *mailServer) unseen(t *testing.T) int {
	t.Helper()
	c, err := imapclient.DialInsecure(m.addr, nil)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Login("desk", "secret").Wait())
	_, err = c.Select("INBOX", nil).Wait()
	require.NoError(t, err)
	res, err := c.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
	require.NoError(t, err)
	return len(res.AllUIDs())
}

func email(id, from, to, subject, body string) string {
	head := "From: " + from + "\nTo: " + to + "\nSubject: " + subject + "\nDate: Mon, 23 Nov 2026 10:00:00 +0000\n"
	if id != "" {
		head += "Message-ID: <" + id + ">\n"
	}
	return head + "Content-Type: text/plain; charset=utf-8\n\n" + body + "\n"
}

func TestMailIngestion(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	deskAddr := "help-" + strings.ToLower(b.project.Key) + "@acme.test"
	_, err := b.desk.Enable(b.ctx, b.owner.Actor, b.project, &deskAddr)
	require.NoError(t, err)
	_, err = b.desk.ApproveAddress(b.ctx, b.owner.Actor, b.project.Key, deskAddr)
	require.NoError(t, err)
	srv := newMailServer(t)
	reg := prometheus.NewRegistry()
	metrics := servicedesk.NewMetrics(reg)
	svc := servicedesk.NewService(b.db, b.bus, audit.NewRecorder(b.bus))
	// A 1 MiB cap here, so the "Huge" message below need not be 48 MiB.
	poller := servicedesk.NewPoller(svc, servicedesk.MailboxConfig{Addr: srv.addr, Username: "desk", Password: "secret",
		MaxMessageBytes: 1 << 20}, metrics, slog.New(slog.NewTextHandler(io.Discard, nil)), true)
	poll := func() servicedesk.PollResult {
		t.Helper()
		res, err := poller.Poll(b.ctx)
		require.NoError(t, err)
		return res
	}
	tickets := func() int { return b.count(t, "SELECT count(*) FROM service_desk_tickets WHERE channel = 'EMAIL'") }

	// Two messages become two tickets; both are marked seen.
	srv.deliver(t, email("a1@example.com", "Ann <Ann@Example.com>", "Help <"+strings.ToUpper(deskAddr)+">", "Printer on fire",
		"The third floor printer.\nPlease hurry."))
	srv.deliver(t, "From: bob@example.com\nTo: "+deskAddr+"\nCc: someone@else.test\nSubject: =?UTF-8?Q?Caf=C3=A9_machine?=\n"+
		"Message-ID: <b1@example.com>\nMIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=\"xyz\"\n\n"+
		"--xyz\nContent-Type: text/html; charset=utf-8\n\n<p>HTML</p>\n"+
		"--xyz\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\nNo caf=E9 today.\n"+
		"--xyz--\n")
	require.Equal(t, servicedesk.PollResult{Tickets: 2}, poll())
	require.Equal(t, 2, tickets())
	require.Equal(t, 0, srv.unseen(t))
	var title, desc, sender, key string
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, `SELECT i.title, i.description, t.sender_email, i.key FROM service_desk_tickets AS t
		JOIN issues AS i ON i.id = t.issue_id WHERE i.title = 'Printer on fire'`).Scan(&title, &desc, &sender, &key))
	require.Equal(t, "**From:** Ann@Example.com\n\nThe third floor printer.\nPlease hurry.", desc)
	require.Equal(t, "Ann@Example.com", sender)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM issues WHERE title = 'Café machine' AND description = '**From:** bob@example.com'
		|| chr(10) || chr(10) || 'No café today.'`))
	// Created like any issue, with the sender's acknowledgement queued (SMTP is on).
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'ISSUE_CREATED'"))
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'servicedesk.ticket_ack'"))

	// A re-poll makes nothing; the same message delivered again is recognized.
	require.Equal(t, servicedesk.PollResult{}, poll())
	srv.deliver(t, email("a1@example.com", "Ann <ann@example.com>", deskAddr, "Printer on fire", "The third floor printer."))
	require.Equal(t, servicedesk.PollResult{Duplicates: 1}, poll())
	require.Equal(t, 2, tickets())

	// A reply naming the ticket's key becomes a system comment on it; the same subject
	// from someone else opens a ticket of its own.
	srv.deliver(t, email("a2@example.com", "ann@example.com", deskAddr, "Re: ["+key+"] We received your request: Printer on fire",
		"It is out now, thanks."))
	srv.deliver(t, email("x1@example.com", "mallory@example.com", deskAddr, "Re: ["+key+"] close it", "Please close."))
	require.Equal(t, servicedesk.PollResult{Tickets: 1, Comments: 1}, poll())
	require.Equal(t, 3, tickets())
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM comments AS c JOIN issues AS i ON i.id = c.issue_id
		WHERE i.key = $1 AND c.author_id IS NULL AND c.body LIKE '%It is out now, thanks.%' AND c.body LIKE '%ann@example.com%'`, key))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND args->>'event' = 'commented' AND args->>'issueKey' = $1", key))

	// Unusable mail is skipped, marked seen and counted; the message after it still
	// becomes a ticket.
	srv.deliver(t, "From: eve@example.com\nTo: "+deskAddr+"\nSubject broken header line\nMessage-ID: <m1@example.com>\n\nbody\n")
	srv.deliver(t, "From: eve@example.com\nTo: "+deskAddr+"\nSubject: Only a PDF\nMessage-ID: <h1@example.com>\n"+
		"Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: application/pdf\nContent-Disposition: attachment; filename=x.pdf\n\n%PDF\n--b--\n")
	srv.deliver(t, email("u1@example.com", "eve@example.com", "nobody@acme.test", "Wrong address", "Hello"))
	srv.deliver(t, email("big@example.com", "eve@example.com", deskAddr, "Huge", strings.Repeat("0123456789abcdef\n", 70000)))
	srv.deliver(t, email("ok@example.com", "carol@example.com", deskAddr, "After the bad ones", "Still works."))
	require.Equal(t, servicedesk.PollResult{Tickets: 1, Skipped: 4}, poll())
	require.Equal(t, 4, tickets())
	require.Equal(t, 0, srv.unseen(t))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM issues WHERE title = 'After the bad ones'"))
	for reason, n := range map[string]float64{"malformed": 1, "no_text": 1, "unknown_address": 1, "too_large": 1} {
		require.Equal(t, n, testutil.ToFloat64(metrics.MailFailures.WithLabelValues(reason)), reason)
	}
	require.Equal(t, 4.0, testutil.ToFloat64(metrics.Tickets.WithLabelValues("EMAIL")))
	require.Equal(t, 1.0, testutil.ToFloat64(metrics.Messages.WithLabelValues("comment")))
	require.Equal(t, 1.0, testutil.ToFloat64(metrics.Messages.WithLabelValues("duplicate")))
	require.Equal(t, 4.0, testutil.ToFloat64(metrics.Messages.WithLabelValues("skipped")))
	require.Equal(t, 5.0, testutil.ToFloat64(metrics.Polls.WithLabelValues("ok")))

	// A wrong password fails the poll (counted), touching nothing.
	bad := servicedesk.NewPoller(svc, servicedesk.MailboxConfig{Addr: srv.addr, Username: "desk", Password: "nope"}, metrics, nil, false)
	_, err = bad.Poll(b.ctx)
	require.ErrorContains(t, err, "imap login")
	require.Equal(t, 1.0, testutil.ToFloat64(metrics.Polls.WithLabelValues("error")))
}

func TestParseEmail(t *testing.T) {
	t.Parallel()
	e, err := servicedesk.ParseEmail([]byte(strings.ReplaceAll(email("", "a@example.com", "Desk <desk@acme.test>", "  Hello \t world ", "Hi"), "\n", "\r\n")))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(e.Key, "sha256:"), "no Message-ID: the digest is the key")
	require.Equal(t, "Hello world", e.Subject)
	require.Equal(t, []string{"desk@acme.test"}, e.To)
	require.Empty(t, e.Envelope)
	require.Equal(t, "Hi", e.Text)

	for name, raw := range map[string]string{
		"malformed":  "From: a@example.com\nno colon here\n\nbody\n",
		"no_text":    "From: a@example.com\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: application/pdf\nContent-Disposition: attachment; filename=x.pdf\n\n%PDF\n--b--\n",
		"too_large":  "From: a@example.com\n\n" + strings.Repeat("x", servicedesk.MaxMailBytes),
		"malformed2": "From: a@example.com\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nunterminated",
		"malformed3": "",
		"malformed4": "\r\n\r\nno header at all\r\n",
	} {
		_, err := servicedesk.ParseEmail([]byte(raw))
		require.Error(t, err, name)
		want := strings.TrimRight(name, "234")
		require.Equal(t, want, servicedesk.FailureReason(err), "%s: %v", name, err)
	}
	// Long subjects and texts are cut to the form's limits when the ticket is made, not here.
	long, err := servicedesk.ParseEmail([]byte(email(uuid.NewString(), "a@example.com", "d@acme.test", strings.Repeat("s", 400),
		strings.Repeat("t", 6000))))
	require.NoError(t, err)
	require.Len(t, long.Text, 6000)
	require.Equal(t, fmt.Sprint(400), fmt.Sprint(len(long.Subject)))
}
