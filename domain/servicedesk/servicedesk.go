// Package servicedesk owns the service desk: a project's desk, public tickets (from
// the web form and from e-mail), SLA policies with their escalation rules, the breach
// monitor that reports every breach and escalation once, and incidents with their
// postmortems (docs/api-conventions.md#service-desk). Tickets are issues: they are
// created through domain/issue, so they publish the same events as any issue.
package servicedesk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// Limits of the desk's members (docs/api-conventions.md#service-desk).
const (
	MaxTitle       = issue.MaxTitle
	MaxDescription = 5000
	MaxEmail       = 255
	MaxPolicyName  = 100
	// MaxMinutes bounds every SLA duration (about 19 months), far beyond any real
	// service level and inside the integer columns.
	MaxMinutes = 1_000_000
	// MaxNotifyUsers bounds one rule's or incident's recipient list.
	MaxNotifyUsers = 100
)

// Ticket channels.
const (
	ChannelWeb   = "WEB"
	ChannelEmail = "EMAIL"
)

// Incident severities, most severe first.
var Severities = []string{"P1", "P2", "P3", "P4"}

// Audit actions of the desk (WRITE level). SLA_BREACHED is the monitor's, by 'system'.
const (
	AuditDeskEnabled         = "SERVICE_DESK_ENABLED"
	AuditPolicyCreated       = "SLA_POLICY_CREATED"
	AuditPolicyDeleted       = "SLA_POLICY_DELETED"
	AuditRuleCreated         = "ESCALATION_RULE_CREATED"
	AuditIncidentCreated     = "INCIDENT_CREATED"
	AuditIncidentResolved    = "INCIDENT_RESOLVED"
	AuditSLABreached         = "SLA_BREACHED"
	AuditSLAResponseBreached = "SLA_RESPONSE_BREACHED"
	AuditSLAEscalated        = "SLA_ESCALATED"
)

// Notification types the desk sends (docs/api-conventions.md#notifications).
const (
	NotifySLABreached         = "SLA_BREACHED"
	NotifySLAResponseBreached = "SLA_RESPONSE_BREACHED"
	NotifySLAEscalated        = "SLA_ESCALATED"
	NotifyIncident            = "INCIDENT"
)

// Errors of the desk rules; api/ maps each to its status (docs/api-conventions.md#errors).
var (
	// ErrDeskNotFound: the project has no desk (for public ticket submission: no
	// enabled desk, or no such project, which look the same from outside).
	ErrDeskNotFound = errors.New("servicedesk: no service desk")
	// ErrEmailTaken: another project's desk already receives mail at that address.
	ErrEmailTaken = errors.New("servicedesk: e-mail address used by another desk")
	// ErrPolicyNotFound: no policy of that id on this project's desk.
	ErrPolicyNotFound = errors.New("servicedesk: SLA policy not found")
	// ErrPolicyExists: the desk already has a policy for that priority.
	ErrPolicyExists = errors.New("servicedesk: an SLA policy for this priority exists")
	// ErrUserNotMember: a user named as assignee or recipient cannot see the project.
	ErrUserNotMember = errors.New("servicedesk: user is not a member of the project")
	// ErrIncidentNotFound: no incident of that id in this project.
	ErrIncidentNotFound = errors.New("servicedesk: incident not found")
	// ErrIncidentResolved: the incident was resolved before.
	ErrIncidentResolved = errors.New("servicedesk: incident already resolved")
)

// Project is what the desk rules need of the project in the path.
type Project struct {
	ID         uuid.UUID
	Key        string
	WorkflowID *uuid.UUID
}

func (p Project) issueProject() issue.Project {
	return issue.Project{ID: p.ID, Key: p.Key, WorkflowID: p.WorkflowID}
}

// Service runs the desk rules on the database and publishes through the bus.
type Service struct {
	db       *bun.DB
	sdb      *store.DB
	bus      *event.Bus
	audit    *audit.Recorder
	issues   *issue.Service
	comments *comment.Service
	now      func() time.Time
	// reserved are the shared mailbox's own addresses, lower case (WithMailbox).
	reserved map[string]bool
	// files keep e-mail attachments, each at most maxFile bytes (WithAttachments).
	files   *attachment.Service
	maxFile int64
}

// NewService builds a Service; it holds no state of its own, so building one per
// request costs nothing.
func NewService(db *store.DB, bus *event.Bus, rec *audit.Recorder) *Service {
	return &Service{db: db.Bun, sdb: db, bus: bus, audit: rec, issues: issue.NewService(db, bus),
		comments: comment.NewService(db, bus, rec), now: time.Now}
}

// record writes an audit entry of a change made by a in p's project, in tx.
func (s *Service) record(ctx context.Context, tx bun.Tx, a audit.Actor, p Project, action, resourceType string, id uuid.UUID, details any) error {
	raw, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("audit details: %w", err)
	}
	e := a.Entry(action, resourceType, id.String(), string(raw))
	e.ProjectID = &p.ID
	return s.audit.Record(ctx, tx, e)
}

// deskOf reads the project's desk, or ErrDeskNotFound; lock takes it FOR KEY SHARE so
// it cannot be deleted under the caller's transaction.
func deskOf(ctx context.Context, db bun.IDB, projectID uuid.UUID, lock bool) (*store.ServiceDesk, error) {
	d := new(store.ServiceDesk)
	q := db.NewSelect().Model(d).Where("d.project_id = ?", projectID)
	if lock {
		q = q.For("KEY SHARE")
	}
	if err := q.Scan(ctx); err != nil {
		if store.IsNotFound(err) {
			return nil, ErrDeskNotFound
		}
		return nil, fmt.Errorf("load service desk: %w", err)
	}
	return d, nil
}

// checkMembers fails with ErrUserNotMember unless every id names a user who can see the
// project (owner, member or member of its organization) and is not deleted.
func checkMembers(ctx context.Context, db bun.IDB, projectID uuid.UUID, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	var n int
	err := db.NewRaw(`SELECT count(*) FROM users AS u
		JOIN projects AS p ON p.id = ?
		WHERE u.id IN (?) AND u.deleted_at IS NULL
		  AND (p.owner_id = u.id
		    OR EXISTS (SELECT 1 FROM project_members AS pm WHERE pm.project_id = p.id AND pm.user_id = u.id)
		    OR EXISTS (SELECT 1 FROM organization_members AS om WHERE om.org_id = p.org_id AND om.user_id = u.id))`,
		projectID, bun.In(ids)).Scan(ctx, &n)
	if err != nil {
		return fmt.Errorf("check members: %w", err)
	}
	if n != len(ids) {
		return ErrUserNotMember
	}
	return nil
}

// unique keeps the first occurrence of each id, in order.
func unique(ids []uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ids))
	seen := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// isNoRows reports whether err is "no rows" from the driver.
func isNoRows(err error) bool {
	return err != nil && store.IsNotFound(err)
}
