package servicedesk_test

import (
	"bytes"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/servicedesk"
	"github.com/taskweave/taskweave/workers"
)

// TestMailToTicketOnWorkers runs e-mail ingestion as a worker process does: the poll is
// a periodic job against a real IMAP server (go-imap's imapmemserver), the ticket shows
// in the desk's list as an EMAIL ticket, and the sender's acknowledgement goes out over
// SMTP naming the ticket key, so their reply comes back to the ticket.
func TestMailToTicketOnWorkers(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	deskAddr := "support-" + strings.ToLower(f.Key) + "@acme.test"
	require.Equal(t, http.StatusOK, h.Do("POST", f.Path("/service-desk/enable"), map[string]any{"emailAddress": deskAddr}, f.Owner.Access).Status)
	// The address routes mail once proven; here a system ADMIN approves it (so its
	// verification mail, sent once the workers start, finds nothing left to prove).
	sys := h.Register("Sys")
	h.MakeAdmin(sys)
	require.Equal(t, http.StatusOK, h.Do("POST", "/api/v1/admin/service-desk/addresses/"+f.Key+"/approve",
		map[string]any{"emailAddress": deskAddr}, sys.Access).Status)

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
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	raw := "From: Dora <dora@example.com>\r\nTo: " + deskAddr + "\r\nSubject: VPN refuses me\r\nMessage-ID: <vpn-1@example.com>\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\nSince this morning.\r\n"
	_, err = user.Append("INBOX", bytes.NewReader([]byte(raw)), &imap.AppendOptions{})
	require.NoError(t, err)

	relay := apitest.NewSMTPRecorder(t)
	h.StartWorkersWith(func(c *workers.Config) {
		c.Mail = workers.MailConfig{Addr: relay.Addr, From: "Taskweave <desk@acme.test>"}
		c.ServiceDesk.Mail = servicedesk.MailboxConfig{Enabled: true, Addr: ln.Addr().String(), Username: "desk",
			Password: "secret", Interval: 100 * time.Millisecond}
	})

	mails := relay.Wait(t, 1)
	require.Len(t, mails, 1)
	require.Equal(t, []string{"dora@example.com"}, mails[0].To)
	ack := apitest.ParseMail(t, mails[0])
	items := h.Do("GET", f.Path("/service-desk/tickets"), nil, f.Owner.Access).Array(t)
	require.Len(t, items, 1)
	item := items[0].(map[string]any)
	key := item["key"].(string)
	require.Equal(t, "EMAIL", item["channel"])
	require.Equal(t, "dora@example.com", item["senderEmail"])
	require.Equal(t, "VPN refuses me", item["title"])
	require.Equal(t, "**From:** dora@example.com\n\nSince this morning.", item["description"])
	require.Equal(t, "["+key+"] We received your request: VPN refuses me", ack.Subject)
	require.Contains(t, ack.Text, key)
	require.Equal(t, "TICKET_RECEIVED", ack.Header.Get("X-Taskweave-Notification-Type"))

	// Later polls make nothing more: one ticket, one acknowledgement.
	polls := h.Count("SELECT count(*) FROM river_job WHERE kind = 'servicedesk.mail_poll' AND state = 'completed'")
	apitest.Eventually(t, 15*time.Second, func() bool {
		return h.Count("SELECT count(*) FROM river_job WHERE kind = 'servicedesk.mail_poll' AND state = 'completed'") >= polls+3
	}, "three more polls")
	require.Len(t, h.Do("GET", f.Path("/service-desk/tickets"), nil, f.Owner.Access).Array(t), 1)
	require.Len(t, relay.Mails(), 1)
}
