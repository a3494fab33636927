package servicedesk

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// NewTicket is a validated ticket: from the public form (WEB) or an e-mail (EMAIL).
type NewTicket struct {
	Title       string
	Description string
	// SenderEmail is nil for an anonymous submission.
	SenderEmail *string
	Channel     string
	// IP and UserAgent of the submitting request, for the audit log ("" for e-mail).
	IP        string
	UserAgent string
}

// Receipt is what the submitter learns: the ticket (its issue's id) and the issue key.
type Receipt struct {
	TicketID uuid.UUID
	IssueKey string
	// ProjectKey and Title name the ticket in an acknowledgement.
	ProjectKey string
	Title      string
	// ReplyToken is set for a ticket without a sender: an e-mail whose subject holds
	// "[<IssueKey> #<ReplyToken>]" adds to the ticket (docs/api-conventions.md#service-desk).
	ReplyToken string
}

// target is an enabled desk with what creating a ticket on it needs: its project and
// the project owner, who reports every ticket.
type target struct {
	DeskID     uuid.UUID  `bun:"desk_id"`
	ProjectID  uuid.UUID  `bun:"project_id"`
	Key        string     `bun:"key"`
	WorkflowID *uuid.UUID `bun:"workflow_id"`
	OwnerID    uuid.UUID  `bun:"owner_id"`
	OwnerEmail string     `bun:"owner_email"`
	OwnerName  string     `bun:"owner_name"`
	Address    string     `bun:"email_address"`
}

// targetQuery selects enabled desks (d) with their projects (p) and owners.
const targetQuery = `SELECT d.id AS desk_id, p.id AS project_id, p.key, p.workflow_id, p.owner_id,
		u.email AS owner_email, u.display_name AS owner_name, coalesce(d.email_address, '') AS email_address
	FROM service_desks AS d
	JOIN projects AS p ON p.id = d.project_id
	JOIN users AS u ON u.id = p.owner_id
	WHERE d.enabled AND `

// loadTarget reads the enabled desk that cond (on desks d and projects p) selects, or
// ErrDeskNotFound.
func loadTarget(ctx context.Context, db bun.IDB, cond string, arg any) (*target, error) {
	t := new(target)
	err := db.NewRaw(targetQuery+cond, arg).Scan(ctx, t)
	if err != nil {
		if store.IsNotFound(err) {
			return nil, ErrDeskNotFound
		}
		return nil, fmt.Errorf("load service desk: %w", err)
	}
	return t, nil
}

// loadTargets reads every enabled desk that cond selects, in project key order.
func loadTargets(ctx context.Context, db bun.IDB, cond string, arg any) ([]target, error) {
	var ts []target
	err := db.NewRaw(targetQuery+cond+" ORDER BY p.key", arg).Scan(ctx, &ts)
	if err != nil && !store.IsNotFound(err) {
		return nil, fmt.Errorf("load service desks: %w", err)
	}
	return ts, nil
}

// Submit creates a ticket on the enabled desk of the project with that key: a TASK
// issue reported by the project owner whose description names the sender, and its
// ticket row, in one transaction with the issue's events (webhooks, audit, automation,
// notifications see an issue created like any other). No such project, or no enabled
// desk, is ErrDeskNotFound.
func (s *Service) Submit(ctx context.Context, projectKey string, in NewTicket) (*Receipt, error) {
	var r *Receipt
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		t, err := loadTarget(ctx, tx, "p.key = ?", projectKey)
		if err != nil {
			return err
		}
		if r, err = s.submit(ctx, tx, t, in); err != nil {
			return err
		}
		return s.acknowledgeWebTicket(ctx, tx, in, r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Web-form acknowledgements: at most WebAckLimit per sender address per WebAckWindow,
// counted across every desk and replica in Postgres. The form is public
// and its address unproven, so without a bound it would mail any address on demand; a
// ticket past the bound is made as usual, without the e-mail (auth.Limiter).
const (
	WebAckLimit  = 3
	WebAckWindow = time.Hour
)

// acknowledgeWebTicket queues the acknowledgement of a web-form ticket that gave a
// sender address, as an e-mailed ticket gets (with no SMTP relay configured the worker
// cancels it).
func (s *Service) acknowledgeWebTicket(ctx context.Context, tx bun.Tx, in NewTicket, r *Receipt) error {
	if in.Channel != ChannelWeb || in.SenderEmail == nil {
		return nil
	}
	err := auth.NewLimiter(tx, WebAckLimit, WebAckWindow).Hit(ctx, "ticket-ack:"+strings.ToLower(*in.SenderEmail))
	var limited *auth.RateLimitError
	if errors.As(err, &limited) {
		return nil // the ticket is made without the e-mail
	}
	if err != nil {
		return fmt.Errorf("acknowledgement limit: %w", err)
	}
	return s.bus.Enqueue(ctx, tx, river.InsertManyParams{Args: jobs.TicketAck{IssueID: r.TicketID}})
}

// TicketDescription is a ticket's issue description: who sent it, a blank line, the
// text (docs/api-conventions.md#service-desk).
func TicketDescription(sender *string, text string) string {
	from := "anonymous"
	if sender != nil {
		from = *sender
	}
	return "**From:** " + from + "\n\n" + text
}

// submit creates the ticket on t within tx.
func (s *Service) submit(ctx context.Context, tx bun.Tx, t *target, in NewTicket) (*Receipt, error) {
	desc := TicketDescription(in.SenderEmail, in.Description)
	reporter := issue.Actor{
		Actor:       audit.Actor{UserID: t.OwnerID, Email: t.OwnerEmail, IP: in.IP, UserAgent: in.UserAgent},
		DisplayName: t.OwnerName,
	}
	p := Project{ID: t.ProjectID, Key: t.Key, WorkflowID: t.WorkflowID}
	v, err := s.issues.WithTx(tx).Create(ctx, p.issueProject(), reporter, issue.NewIssue{
		Title: in.Title, Description: &desc, Type: issue.TypeTask, Priority: issue.PriorityMedium,
	})
	if err != nil {
		return nil, err
	}
	row := &store.ServiceDeskTicket{IssueID: v.ID, ServiceDeskID: t.DeskID, SenderEmail: in.SenderEmail,
		Channel: in.Channel, ResponseOpen: true}
	// Only the sender may reply by e-mail; a ticket without one gets a token instead.
	var token string
	if in.SenderEmail == nil {
		token = randomString(replyTokenAlphabet, 16)
		row.ReplyTokenHash = tokenHash(token)
	}
	if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
		return nil, fmt.Errorf("insert ticket: %w", err)
	}
	return &Receipt{TicketID: v.ID, IssueKey: v.Key, ProjectKey: t.Key, Title: v.Title, ReplyToken: token}, nil
}

// TicketItem is a ticket as the ticket list shows it: its issue, where it came from,
// and its SLA state.
type TicketItem struct {
	*issue.View
	SenderEmail *string
	Channel     string
	// SLADueAt is when the resolution time of the issue's policy runs out: nil while the
	// timer is not running or no policy covers the issue's priority. With a calendar or
	// pause statuses it counts business time and pauses (nil while paused).
	SLADueAt *time.Time
	// Breached: SLADueAt has passed, or a resolution or response breach of the ticket
	// has been reported (it stays breached after it is resolved).
	Breached bool
}

// ticketRow is one ticket of the list before its issue is read.
type ticketRow struct {
	IssueID     uuid.UUID  `bun:"issue_id"`
	SenderEmail *string    `bun:"sender_email"`
	Channel     string     `bun:"channel"`
	SLADueAt    *time.Time `bun:"sla_due_at"`
	Breached    bool       `bun:"breached"`
	Reported    bool       `bun:"reported"`
	Timed       bool       `bun:"timed"`
}

// Tickets returns one slice of p's tickets, newest first, with their SLA state at the
// service's clock: two queries (tickets, then their issues and labels) whatever the
// slice holds. A project without a desk is ErrDeskNotFound.
func (s *Service) Tickets(ctx context.Context, p Project, offset, limit int) ([]TicketItem, error) {
	d, err := deskOf(ctx, s.db, p.ID, false)
	if err != nil {
		return nil, err
	}
	var rows []ticketRow
	now := s.now().UTC()
	err = s.db.NewRaw(`SELECT t.issue_id, t.sender_email, t.channel, due.at AS sla_due_at,
			(due.at IS NOT NULL AND due.at <= ?)
			OR EXISTS (SELECT 1 FROM sla_reports AS r WHERE r.issue_id = t.issue_id AND r.kind IN ('RESOLUTION', 'RESPONSE'))
			AS breached,
			EXISTS (SELECT 1 FROM sla_reports AS r WHERE r.issue_id = t.issue_id AND r.kind IN ('RESOLUTION', 'RESPONSE'))
			AS reported,
			coalesce(sp.calendar_id IS NOT NULL OR cardinality(sp.pause_status_ids) > 0, false) AS timed
		FROM service_desk_tickets AS t
		JOIN issues AS i ON i.id = t.issue_id
		LEFT JOIN sla_policies AS sp ON sp.service_desk_id = t.service_desk_id AND sp.priority = i.priority
		CROSS JOIN LATERAL (SELECT CASE WHEN sp.calendar_id IS NULL AND cardinality(sp.pause_status_ids) = 0
			THEN i.sla_start_time + make_interval(mins => sp.resolution_minutes) END AS at) AS due
		WHERE t.service_desk_id = ?
		ORDER BY t.created_at DESC, t.issue_id DESC
		LIMIT ? OFFSET ?`, now, d.ID, limit, offset).Scan(ctx, &rows)
	if err != nil && !store.IsNotFound(err) {
		return nil, fmt.Errorf("list tickets: %w", err)
	}
	// A policy with a calendar or pauses: its due time computed now, as the scan will.
	var timed []uuid.UUID
	for _, r := range rows {
		if r.Timed {
			timed = append(timed, r.IssueID)
		}
	}
	if len(timed) > 0 {
		due, err := resolutionDue(ctx, s.db, p.ID, timed)
		if err != nil {
			return nil, err
		}
		for i := range rows {
			if r := &rows[i]; r.Timed {
				r.SLADueAt = due[r.IssueID]
				r.Breached = r.Reported || (r.SLADueAt != nil && !r.SLADueAt.After(now))
			}
		}
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.IssueID
	}
	views, err := issue.Views(ctx, s.db, p.issueProject(), ids)
	if err != nil {
		return nil, err
	}
	out := make([]TicketItem, 0, len(rows))
	for _, r := range rows {
		v, ok := views[r.IssueID]
		if !ok {
			continue // deleted between the two reads
		}
		out = append(out, TicketItem{View: v, SenderEmail: r.SenderEmail, Channel: r.Channel, SLADueAt: r.SLADueAt,
			Breached: r.Breached})
	}
	return out, nil
}
