package servicedesk

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// errUnknownAddress: no enabled desk receives mail at the e-mail's envelope recipient
// or To addresses.
var errUnknownAddress = errors.New("servicedesk: e-mail is not addressed to a service desk")

// errAmbiguousAddress: more than one enabled desk could receive the e-mail.
var errAmbiguousAddress = errors.New("servicedesk: e-mail is addressed to more than one service desk")

// AmbiguousError is an e-mail refused because more than one desk could receive it:
// Desks are their project keys, Addresses their matching addresses, in key order.
type AmbiguousError struct {
	Desks     []string
	Addresses []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s: %s", errAmbiguousAddress, strings.Join(e.Desks, ", "))
}

// Unwrap makes it errAmbiguousAddress for FailureReason and Skipped.
func (e *AmbiguousError) Unwrap() error { return errAmbiguousAddress }

// Outcomes of one ingested e-mail (mail_messages.outcome, and with "duplicate" the
// label of taskweave_mail_ingest_messages_total).
const (
	IngestTicket    = "TICKET"
	IngestComment   = "COMMENT"
	IngestSkipped   = "SKIPPED"
	IngestDuplicate = "DUPLICATE"
)

// Ingested is what became of one e-mail.
type Ingested struct {
	Outcome string
	// IssueID and IssueKey name the new ticket, or the ticket the reply was added to.
	IssueID  uuid.UUID
	IssueKey string
}

// Ingest turns one parsed e-mail into a ticket of the desk it is addressed to, or, when
// its subject names a ticket of that desk and it comes from the ticket's sender (or
// carries the ticket's reply token), into a system comment on that ticket. The desk is
// the one enabled desk whose verified address is the e-mail's envelope recipient or one
// of its To addresses (never Cc, never the shared mailbox's own address); pending
// addresses route nothing. It is idempotent by the e-mail's Key: one already ingested
// (or skipped) is IngestDuplicate and changes nothing. An e-mail to no desk is recorded
// as skipped and returns an error whose FailureReason is FailureUnknownAddress; one
// that more than one desk could receive goes to neither and returns an *AmbiguousError
// (FailureAmbiguousAddress). ack queues the sender's acknowledgement (jobs.TicketAck)
// with a new ticket. The e-mail's files (WithAttachments) are stored before the
// transaction and recorded on the ticket inside it, so they are kept exactly when the
// ticket or comment is; a duplicate stores none, and any failure removes what was
// stored.
func (s *Service) Ingest(ctx context.Context, e *Email, ack bool) (Ingested, error) {
	files, err := s.storeAttachments(ctx, e)
	if err != nil {
		return Ingested{}, err
	}
	recorded := false
	defer func() {
		if !recorded {
			s.discardAttachments(ctx, files)
		}
	}()
	var out Ingested
	var refused error
	err = store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		out, refused = Ingested{}, nil
		var targets []target
		if cands := s.routeAddresses(e); len(cands) > 0 {
			var err error
			targets, err = loadTargets(ctx, tx, "d.email_verified_at IS NOT NULL AND lower(d.email_address) IN (?)", bun.In(cands))
			if err != nil {
				return err
			}
		}
		if len(targets) != 1 {
			fresh, err := recordMail(ctx, tx, e.Key, IngestSkipped, nil)
			if err != nil {
				return err
			}
			if !fresh {
				out.Outcome = IngestDuplicate
				return nil
			}
			out.Outcome = IngestSkipped
			refused = errUnknownAddress
			if len(targets) > 1 {
				amb := &AmbiguousError{}
				for _, t := range targets {
					amb.Desks = append(amb.Desks, t.Key)
					amb.Addresses = append(amb.Addresses, t.Address)
				}
				refused = amb
			}
			return nil
		}
		t := &targets[0]
		fresh, err := recordMail(ctx, tx, e.Key, IngestTicket, nil)
		if err != nil {
			return err
		}
		if !fresh {
			out.Outcome = IngestDuplicate
			return nil
		}
		sender := senderAddress(e.From)
		if reply, err := s.replyTarget(ctx, tx, t, e.Subject, sender); err != nil {
			return err
		} else if reply != nil {
			p := Project{ID: t.ProjectID, Key: t.Key, WorkflowID: t.WorkflowID}
			body := TicketDescription(sender, ticketText(e.Text))
			if _, err := s.comments.WithTx(tx).Create(ctx, p.issueProject(), nil, issue.Ref{ID: reply.IssueID}, body); err != nil {
				return err
			}
			if err := s.recordAttachments(ctx, tx, t, issue.Ref{ID: reply.IssueID}, files); err != nil {
				return err
			}
			out = Ingested{Outcome: IngestComment, IssueID: reply.IssueID, IssueKey: reply.IssueKey}
		} else {
			r, err := s.submit(ctx, tx, t, NewTicket{Title: ticketTitle(e.Subject), Description: ticketText(e.Text),
				SenderEmail: sender, Channel: ChannelEmail})
			if err != nil {
				return err
			}
			out = Ingested{Outcome: IngestTicket, IssueID: r.TicketID, IssueKey: r.IssueKey}
			if err := s.recordAttachments(ctx, tx, t, issue.Ref{ID: r.TicketID}, files); err != nil {
				return err
			}
			if ack && sender != nil {
				if err := s.bus.Enqueue(ctx, tx, river.InsertManyParams{Args: jobs.TicketAck{IssueID: r.TicketID}}); err != nil {
					return err
				}
			}
		}
		_, err = tx.NewRaw("UPDATE mail_messages SET outcome = ?, issue_id = ? WHERE message_id = ?", out.Outcome, out.IssueID, e.Key).Exec(ctx)
		if err != nil {
			return fmt.Errorf("record e-mail: %w", err)
		}
		return nil
	})
	if err != nil {
		return Ingested{}, err
	}
	recorded = out.Outcome == IngestTicket || out.Outcome == IngestComment
	if out.Outcome == IngestSkipped {
		return out, refused
	}
	return out, nil
}

// routeAddresses are the addresses e may be routed by: its envelope recipient and its
// To addresses, without the shared mailbox's own (a mailbox that stamps its own address
// as Delivered-To routes by To).
func (s *Service) routeAddresses(e *Email) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range append([]string{e.Envelope}, e.To...) {
		if a != "" && !seen[a] && !s.Reserved(a) {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// recordMail inserts the e-mail's row; fresh is false when the key was there already.
func recordMail(ctx context.Context, tx bun.Tx, key, outcome string, issueID *uuid.UUID) (bool, error) {
	var k string
	err := tx.NewRaw(`INSERT INTO mail_messages (message_id, outcome, issue_id) VALUES (?, ?, ?)
		ON CONFLICT (message_id) DO NOTHING RETURNING message_id`, key, outcome, issueID).Scan(ctx, &k)
	if isNoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("record e-mail: %w", err)
	}
	return true, nil
}

// replyRef is the ticket a reply goes to.
type replyRef struct {
	IssueID  uuid.UUID `bun:"issue_id"`
	IssueKey string    `bun:"key"`
}

// replyTarget finds the ticket of desk t that the subject names and that this e-mail
// may add to, or nil: the ticket's sender may, by its key ("[ABC-12]"); anyone holding a
// sender-less ticket's reply token may, by key and token ("[ABC-12 #token]"). Any other
// e-mail naming a ticket opens a ticket of its own rather than adding to another
// person's.
func (s *Service) replyTarget(ctx context.Context, tx bun.Tx, t *target, subject string, sender *string) (*replyRef, error) {
	var keys []string
	for _, k := range subjectKeys(subject) {
		if strings.HasPrefix(k, t.Key+"-") {
			keys = append(keys, k)
		}
	}
	tokenKey, token := subjectToken(subject)
	var hash []byte
	if token != "" && strings.HasPrefix(tokenKey, t.Key+"-") {
		hash = tokenHash(token)
	}
	if len(keys) == 0 || (sender == nil && hash == nil) {
		return nil, nil
	}
	from := ""
	if sender != nil {
		from = strings.ToLower(*sender)
	}
	var ref replyRef
	err := tx.NewRaw(`SELECT tk.issue_id, i.key FROM service_desk_tickets AS tk
		JOIN issues AS i ON i.id = tk.issue_id
		WHERE tk.service_desk_id = ? AND i.key IN (?)
		  AND ((tk.sender_email IS NOT NULL AND lower(tk.sender_email) = ? AND ? <> '')
		    OR (tk.reply_token_hash IS NOT NULL AND tk.reply_token_hash = ? AND i.key = ?))
		ORDER BY i.number LIMIT 1`, t.DeskID, bun.In(keys), from, from, hash, tokenKey).Scan(ctx, &ref)
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find replied ticket: %w", err)
	}
	return &ref, nil
}
