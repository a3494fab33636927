package servicedesk

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// MaxPostmortem is the longest postmortem accepted, in characters: it becomes a
// comment, whose limit it stays well inside with its heading.
const MaxPostmortem = 45000

// PostmortemHeading starts the system comment a postmortem becomes.
const PostmortemHeading = "**Postmortem**"

// NewIncident is a validated incident; NotifyUserIDs holds no duplicates.
type NewIncident struct {
	IssueID uuid.UUID
	// IssueKey names the issue by its key instead of IssueID (the API takes either).
	IssueKey         string
	Severity         string
	OnCallAssigneeID *uuid.UUID
	NotifyUserIDs    []uuid.UUID
}

// IncidentView is an incident with its issue's key.
type IncidentView struct {
	store.Incident `bun:",extend"`

	IssueKey string `bun:"issue_key"`
}

// CreateIncident opens an incident on an issue of the project and, in the same
// transaction, queues one INCIDENT notification for each listed user (none for an empty
// list; the creator is never notified of their own action). An issue of another
// project is issue.ErrNotFound; an on-call assignee or recipient who cannot see the
// project is ErrUserNotMember.
func (s *Service) CreateIncident(ctx context.Context, by audit.Actor, p Project, in NewIncident) (*IncidentView, error) {
	out := &IncidentView{}
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		ref := issue.Ref{ID: in.IssueID}
		if in.IssueKey != "" {
			ref = issue.Ref{Key: in.IssueKey}
		}
		subj, err := issue.LoadSubject(ctx, tx, p.issueProject(), ref, true)
		if err != nil {
			return err
		}
		recipients := unique(in.NotifyUserIDs)
		users := recipients
		if in.OnCallAssigneeID != nil {
			users = unique(append([]uuid.UUID{*in.OnCallAssigneeID}, recipients...))
		}
		if err := checkMembers(ctx, tx, p.ID, users); err != nil {
			return err
		}
		creator := by.UserID
		out.Incident = store.Incident{ProjectID: p.ID, IssueID: subj.IssueID, Severity: in.Severity,
			OnCallAssigneeID: in.OnCallAssigneeID, CreatedBy: &creator}
		out.IssueKey = subj.IssueKey
		if _, err := tx.NewInsert().Model(&out.Incident).Returning("*").Exec(ctx); err != nil {
			return fmt.Errorf("insert incident: %w", err)
		}
		if err := s.record(ctx, tx, by, p, AuditIncidentCreated, "INCIDENT", out.ID, map[string]any{
			"issueKey": subj.IssueKey, "severity": in.Severity, "onCallAssigneeId": in.OnCallAssigneeID}); err != nil {
			return err
		}
		if len(recipients) == 0 {
			return nil
		}
		return s.bus.Enqueue(ctx, tx, river.InsertManyParams{Args: directNotification(NotifyIncident, subj, &creator,
			recipients, map[string]string{"severity": in.Severity})})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// directNotification is the notification job of type typ on subj for recipients.
func directNotification(typ string, subj issue.Subject, actor *uuid.UUID, recipients []uuid.UUID, args map[string]string) jobs.NotifyEvent {
	return jobs.NotifyEvent{Event: jobs.NotifyDirect, Type: typ, Recipients: recipients, Args: args,
		ProjectID: subj.ProjectID, ProjectKey: subj.ProjectKey, IssueID: subj.IssueID, IssueKey: subj.IssueKey,
		IssueTitle: subj.Title, ActorID: actor}
}

// Incidents returns the project's incidents, newest first, in one query.
func (s *Service) Incidents(ctx context.Context, p Project) ([]IncidentView, error) {
	out := []IncidentView{}
	err := s.db.NewSelect().Model(&out).ColumnExpr("inc.*, i.key AS issue_key").
		Join("JOIN issues AS i ON i.id = inc.issue_id").
		Where("inc.project_id = ?", p.ID).OrderExpr("inc.created_at DESC, inc.id DESC").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list incidents: %w", err)
	}
	return out, nil
}

// ResolveIncident resolves an open incident of the project. A postmortem is stored and
// added to the incident's issue as a system comment (no author) starting with
// PostmortemHeading, in the same transaction; nil resolves without one. A resolved
// incident is ErrIncidentResolved, another project's ErrIncidentNotFound.
func (s *Service) ResolveIncident(ctx context.Context, by audit.Actor, p Project, id uuid.UUID, postmortem *string) error {
	return store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var inc store.Incident
		err := tx.NewSelect().Model(&inc).Where("inc.id = ? AND inc.project_id = ?", id, p.ID).For("UPDATE").Scan(ctx)
		if err != nil {
			if store.IsNotFound(err) {
				return ErrIncidentNotFound
			}
			return fmt.Errorf("load incident: %w", err)
		}
		if inc.ResolvedAt != nil {
			return ErrIncidentResolved
		}
		var at time.Time
		err = tx.NewUpdate().Model((*store.Incident)(nil)).
			Set("resolved_at = clock_timestamp()").Set("postmortem_body = ?", postmortem).
			Where("id = ?", id).Returning("resolved_at").Scan(ctx, &at)
		if err != nil {
			return fmt.Errorf("resolve incident: %w", err)
		}
		if postmortem != nil {
			body := PostmortemHeading + "\n\n" + *postmortem
			if _, err := s.comments.WithTx(tx).Create(ctx, p.issueProject(), nil, issue.Ref{ID: inc.IssueID}, body); err != nil {
				return err
			}
		}
		return s.record(ctx, tx, by, p, AuditIncidentResolved, "INCIDENT", id, map[string]any{
			"postmortem": postmortem != nil, "resolvedAt": at.UTC()})
	})
}
