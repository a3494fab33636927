package servicedesk_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/servicedesk"
	"github.com/taskweave/taskweave/jobs"
)

// syncBuffer is a log sink the poller writes to and the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// deskWith gives a new project of b's owner a desk at addr, approved (verified) unless
// pending.
func (b *bundle) deskWith(t *testing.T, addr string, pending bool) servicedesk.Project {
	t.Helper()
	p, _, _, _ := b.newProject(t, b.owner)
	d, err := b.desk.Enable(b.ctx, b.owner.Actor, p, &addr)
	require.NoError(t, err)
	require.Equal(t, servicedesk.AddressPending, *servicedesk.AddressStatus(d))
	if !pending {
		d, err = b.desk.ApproveAddress(b.ctx, b.owner.Actor, p.Key, addr)
		require.NoError(t, err)
		require.Equal(t, servicedesk.AddressVerified, *servicedesk.AddressStatus(d))
	}
	return p
}

// TestMailRoutingByEnvelopeOrTo routes by the envelope recipient (the topmost
// X-Original-To, else Delivered-To) or To alone, only to verified addresses, never by
// Cc or the shared mailbox's own address; an e-mail two desks could receive goes to
// neither, counted as ambiguous_address and logged with both desks.
func TestMailRoutingByEnvelopeOrTo(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	tag := strings.ToLower(uuid.NewString()[:8])
	addrA, addrB, addrP := "a-"+tag+"@acme.test", "b-"+tag+"@acme.test", "p-"+tag+"@acme.test"
	own := "inbox-" + tag + "@mailbox.test"
	a, bb, p := b.deskWith(t, addrA, false), b.deskWith(t, addrB, false), b.deskWith(t, addrP, true)

	srv := newMailServer(t)
	metrics := servicedesk.NewMetrics(prometheus.NewRegistry())
	var logs syncBuffer
	svc := servicedesk.NewService(b.db, b.bus, audit.NewRecorder(b.bus)).WithMailbox([]string{own})
	poller := servicedesk.NewPoller(svc, servicedesk.MailboxConfig{Addr: srv.addr, Username: "desk", Password: "secret"},
		metrics, slog.New(slog.NewTextHandler(&logs, nil)), false)
	tickets := func(p servicedesk.Project) int {
		return b.count(t, `SELECT count(*) FROM service_desk_tickets AS t JOIN service_desks AS d ON d.id = t.service_desk_id
			WHERE d.project_id = $1`, p.ID)
	}
	msg := func(head, subject string) string {
		return head + "From: carol@example.com\nSubject: " + subject + "\nMessage-ID: <" + uuid.NewString() + "@example.com>\n" +
			"Content-Type: text/plain\n\nHello\n"
	}

	// Cc alone, a pending address, and a lower (sender-written) X-Original-To under the
	// mailbox's own route nothing.
	srv.deliver(t, msg("To: someone@else.test\nCc: "+addrA+"\n", "cc only"))
	srv.deliver(t, msg("To: "+addrP+"\n", "pending"))
	srv.deliver(t, msg("X-Original-To: "+own+"\nX-Original-To: "+addrB+"\nTo: someone@else.test\n", "forged envelope"))
	res, err := poller.Poll(b.ctx)
	require.NoError(t, err)
	require.Equal(t, servicedesk.PollResult{Skipped: 3}, res)
	require.Equal(t, 3.0, testutil.ToFloat64(metrics.MailFailures.WithLabelValues("unknown_address")))
	require.Zero(t, tickets(a)+tickets(bb)+tickets(p))

	// To, and the envelope recipient with a To naming no desk, each route to one desk; the
	// mailbox's own Delivered-To is ignored in favour of To.
	srv.deliver(t, msg("Delivered-To: "+strings.ToUpper(own)+"\nTo: Desk A <"+strings.ToUpper(addrA)+">\nCc: "+addrB+"\n", "to a"))
	srv.deliver(t, msg("X-Original-To: "+addrB+"\nDelivered-To: "+own+"\nTo: list@else.test\n", "envelope b"))
	res, err = poller.Poll(b.ctx)
	require.NoError(t, err)
	require.Equal(t, servicedesk.PollResult{Tickets: 2}, res)
	require.Equal(t, 1, tickets(a))
	require.Equal(t, 1, tickets(bb))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM issues WHERE project_id = $1 AND title = 'to a'", a.ID))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM issues WHERE project_id = $1 AND title = 'envelope b'", bb.ID))

	// Two desks in To, or one as envelope recipient and one in To: neither gets it.
	srv.deliver(t, msg("To: "+addrA+", "+addrB+"\n", "both in to"))
	srv.deliver(t, msg("X-Original-To: "+addrA+"\nTo: "+addrB+"\n", "envelope and to"))
	res, err = poller.Poll(b.ctx)
	require.NoError(t, err)
	require.Equal(t, servicedesk.PollResult{Skipped: 2}, res)
	require.Equal(t, 1, tickets(a))
	require.Equal(t, 1, tickets(bb))
	require.Equal(t, 2.0, testutil.ToFloat64(metrics.MailFailures.WithLabelValues("ambiguous_address")))
	require.Equal(t, 5, b.count(t, "SELECT count(*) FROM mail_messages WHERE outcome = 'SKIPPED'"), "3 unknown, 2 ambiguous")
	keys := []string{a.Key, bb.Key}
	if keys[1] < keys[0] {
		keys[0], keys[1] = keys[1], keys[0]
	}
	out := logs.String()
	require.Equal(t, 2, strings.Count(out, "more than one service desk matches"), out)
	require.Contains(t, out, "reason=ambiguous_address")
	require.Contains(t, out, "desks=\"["+keys[0]+" "+keys[1]+"]\"", out)
}

// TestStrangerReplyOpensTicket: a reply naming a ticket without a sender is accepted
// only with the ticket's reply token (from its receipt); anyone else's "Re: [KEY-n]"
// opens a ticket of its own.
func TestStrangerReplyOpensTicket(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	addr := "reply-" + strings.ToLower(uuid.NewString()[:8]) + "@acme.test"
	p := b.deskWith(t, addr, false)
	web, err := b.desk.Submit(b.ctx, p.Key, servicedesk.NewTicket{Title: "Form", Description: "no sender", Channel: servicedesk.ChannelWeb})
	require.NoError(t, err)
	require.Regexp(t, `^[a-z2-7]{16}$`, web.ReplyToken)
	other, err := b.desk.Submit(b.ctx, p.Key, servicedesk.NewTicket{Title: "Other", Channel: servicedesk.ChannelWeb})
	require.NoError(t, err)
	sent := "dora@example.com"
	withSender, err := b.desk.Submit(b.ctx, p.Key, servicedesk.NewTicket{Title: "Signed", SenderEmail: &sent, Channel: servicedesk.ChannelWeb})
	require.NoError(t, err)
	require.Empty(t, withSender.ReplyToken, "a ticket with a sender takes replies from the sender")
	require.Equal(t, 2, b.count(t, "SELECT count(*) FROM service_desk_tickets WHERE reply_token_hash IS NOT NULL AND service_desk_id = (SELECT id FROM service_desks WHERE project_id = $1)", p.ID))

	ingest := func(from, subject string) servicedesk.Ingested {
		t.Helper()
		e, err := servicedesk.ParseEmail([]byte(strings.ReplaceAll(email(uuid.NewString()+"@example.com", from, addr, subject, "text of "+subject), "\n", "\r\n")))
		require.NoError(t, err)
		got, err := b.desk.Ingest(b.ctx, e, false)
		require.NoError(t, err)
		return got
	}
	comments := func(key string) int {
		return b.count(t, "SELECT count(*) FROM comments AS c JOIN issues AS i ON i.id = c.issue_id WHERE i.key = $1", key)
	}

	// A stranger naming the sender-less ticket, another ticket's token, and a wrong token
	// open tickets; nothing lands on it.
	require.Equal(t, servicedesk.IngestTicket, ingest("mallory@example.com", "Re: ["+web.IssueKey+"] close this").Outcome)
	require.Equal(t, servicedesk.IngestTicket, ingest("mallory@example.com", "Re: ["+web.IssueKey+" #"+other.ReplyToken+"] close").Outcome)
	require.Equal(t, servicedesk.IngestTicket, ingest("mallory@example.com", "Re: ["+web.IssueKey+" #abcdefghijklmnop] close").Outcome)
	require.Equal(t, servicedesk.IngestTicket, ingest("mallory@example.com", "Re: ["+withSender.IssueKey+"] close").Outcome)
	require.Zero(t, comments(web.IssueKey))
	require.Zero(t, comments(withSender.IssueKey))

	// The token (any case) and the ticket's sender are accepted.
	got := ingest("anyone@example.com", "Re: ["+web.IssueKey+" #"+strings.ToUpper(web.ReplyToken)+"] more details")
	require.Equal(t, servicedesk.IngestComment, got.Outcome)
	require.Equal(t, web.IssueKey, got.IssueKey)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM comments AS c JOIN issues AS i ON i.id = c.issue_id
		WHERE i.key = $1 AND c.body LIKE '%anyone@example.com%' AND c.body LIKE '%more details%'`, web.IssueKey))
	require.Equal(t, servicedesk.IngestComment, ingest("Dora@Example.com", "Re: ["+withSender.IssueKey+"] thanks").Outcome)
	require.Equal(t, 1, comments(withSender.IssueKey))
}

// TestVerificationMailOnlyWhileCurrent: the verification job renders its mail (address,
// project and code) only while its code is the desk's and the address still waits; once
// another desk proved the address first, or the address changed, the job sends nothing.
func TestVerificationMailOnlyWhileCurrent(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	addr := "v-" + strings.ToLower(uuid.NewString()[:8]) + "@acme.test"
	jobOf := func(p servicedesk.Project) jobs.DeskAddressVerification {
		t.Helper()
		var j jobs.DeskAddressVerification
		require.NoError(t, b.db.Pool.QueryRow(b.ctx, `SELECT (args->>'id')::uuid, (args->>'deskId')::uuid, args->>'address', args->>'code'
			FROM river_job WHERE kind = 'servicedesk.address_verification' AND args->>'deskId' = (SELECT id::text FROM service_desks WHERE project_id = $1)
			ORDER BY id DESC LIMIT 1`, p.ID).Scan(&j.ID, &j.DeskID, &j.Address, &j.Code))
		return j
	}
	first, second := b.deskWith(t, addr, true), b.deskWith(t, addr, true)
	j1, j2 := jobOf(first), jobOf(second)
	require.NotEqual(t, j1.Code, j2.Code)
	m, err := b.desk.VerificationMail(b.ctx, j1)
	require.NoError(t, err)
	require.NotNil(t, m)
	require.Equal(t, addr, m.To)
	require.Contains(t, m.Text, j1.Code)
	require.Contains(t, m.Text, first.Key)
	forged := j1
	forged.Code = j2.Code
	m, err = b.desk.VerificationMail(b.ctx, forged)
	require.NoError(t, err)
	require.Nil(t, m, "another desk's code is not this desk's")

	// The second desk proves the address first: the first's mail is no longer sent.
	_, err = b.desk.VerifyAddress(b.ctx, b.owner.Actor, second, j2.Code)
	require.NoError(t, err)
	m, err = b.desk.VerificationMail(b.ctx, j1)
	require.NoError(t, err)
	require.Nil(t, m)
	_, err = b.desk.VerifyAddress(b.ctx, b.owner.Actor, first, j1.Code)
	require.ErrorIs(t, err, servicedesk.ErrEmailTaken)

	// A desk whose address changed sends nothing for the old one.
	third := b.deskWith(t, "w-"+addr, true)
	j3 := jobOf(third)
	other := "x-" + addr
	_, err = b.desk.Enable(b.ctx, b.owner.Actor, third, &other)
	require.NoError(t, err)
	m, err = b.desk.VerificationMail(b.ctx, j3)
	require.NoError(t, err)
	require.Nil(t, m)
}
