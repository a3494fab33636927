package servicedesk_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/servicedesk"
)

// TestWebTicketAcknowledgement: a web-form ticket that gives a sender address gets the
// acknowledgement e-mail an e-mailed ticket gets (a servicedesk.ticket_ack job with the
// ticket), at most WebAckLimit per address (any case, any desk) per window, so the public
// form cannot be used to mail an address over and over; the tickets themselves are all
// made. A ticket without an address gets none.
func TestWebTicketAcknowledgement(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	p := b.deskWith(t, "ack-"+strings.ToLower(uuid.NewString()[:8])+"@acme.test", false)
	acks := func(issueID uuid.UUID) int {
		return b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'servicedesk.ticket_ack' AND args->>'issueId' = $1", issueID.String())
	}
	victim := "victim-" + uuid.NewString()[:8] + "@example.com"
	for i := range servicedesk.WebAckLimit + 2 {
		addr := victim
		if i%2 == 1 {
			addr = strings.ToUpper(victim)
		}
		r, err := b.desk.Submit(b.ctx, p.Key, servicedesk.NewTicket{Title: "Form", Description: "hello", SenderEmail: &addr, Channel: servicedesk.ChannelWeb})
		require.NoError(t, err)
		want := 1
		if i >= servicedesk.WebAckLimit {
			want = 0
		}
		require.Equal(t, want, acks(r.TicketID), "ticket %d from the same address", i+1)
	}
	require.Equal(t, servicedesk.WebAckLimit+2, b.count(t, "SELECT count(*) FROM service_desk_tickets WHERE lower(sender_email) = $1", victim))

	other := "someone-" + uuid.NewString()[:8] + "@example.com"
	r, err := b.desk.Submit(b.ctx, p.Key, servicedesk.NewTicket{Title: "Form", Description: "hi", SenderEmail: &other, Channel: servicedesk.ChannelWeb})
	require.NoError(t, err)
	require.Equal(t, 1, acks(r.TicketID))
	anon, err := b.desk.Submit(b.ctx, p.Key, servicedesk.NewTicket{Title: "Form", Description: "hi", Channel: servicedesk.ChannelWeb})
	require.NoError(t, err)
	require.Zero(t, acks(anon.TicketID))
}
