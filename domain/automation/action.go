package automation

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// errRefused wraps what an action refuses by itself (a stored parameter that no longer
// makes sense).
var errRefused = errors.New("automation: action refused")

// Refusal reports whether err, from an action, is the domain refusing the change (a
// workflow transition or guard, a member check, a deleted issue, a constraint): the
// rule's execution is FAILED with the reason and the event's other rules go on. An
// infrastructure failure (the database unreachable or failing a statement, a deadline)
// is not: the job is retried. Anything the code did not foresee counts as a refusal,
// so it shows in the rule's log instead of retrying for hours.
func Refusal(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, sql.ErrTxDone) {
		return false
	}
	t := store.Translate(err)
	var constraint *store.ConstraintError
	switch {
	case errors.As(t, &constraint), errors.Is(t, store.ErrInvalidInput):
		return true
	case errors.Is(t, store.ErrUnavailable):
		return false
	}
	var pg *pgconn.PgError
	var netErr net.Error
	return !errors.As(err, &pg) && !errors.As(err, &netErr)
}

// run is one rule's actions on one issue, inside the rule's transaction.
type run struct {
	engine *Engine
	tx     bun.Tx
	rule   *Rule
	subj   *subject
	people people
	job    jobs.AutomationEvaluate
}

// action runs a; its changes go through the domain services on the rule's
// transaction and publish their events there (at the next chain depth, in ctx).
func (r *run) action(ctx context.Context, a Action) error {
	p := issue.Project{ID: r.subj.ProjectID, Key: r.subj.ProjectKey, WorkflowID: r.subj.WorkflowID}
	ref := issue.Ref{ID: r.subj.ID}
	issues := issue.NewService(r.engine.DB, r.engine.Bus).WithTx(r.tx)
	actor := r.people.actorOf(r.rule)
	switch a.Type {
	case ActionSetStatus:
		id, err := param(a, "statusId")
		if err != nil {
			return err
		}
		return issues.Apply(ctx, p, actor, ref, issue.Patch{StatusID: &id})
	case ActionSetPriority:
		prio := a.Params["priority"]
		if !valid(issue.Priorities, prio) {
			return fmt.Errorf("%w: unknown priority %q", errRefused, prio)
		}
		return issues.Apply(ctx, p, actor, ref, issue.Patch{Priority: &prio})
	case ActionSetAssignee:
		patch := issue.Patch{ClearAssignee: true}
		if strings.TrimSpace(a.Params["assigneeId"]) != "" {
			id, err := param(a, "assigneeId")
			if err != nil {
				return err
			}
			patch = issue.Patch{AssigneeID: &id}
		}
		return issues.Apply(ctx, p, actor, ref, patch)
	case ActionSendNotification:
		return r.notify(ctx, a)
	case ActionSendWebhook:
		return r.sendWebhook(ctx, a)
	case ActionCreateComment:
		// Written by the automation user; the comment's rule_id names the rule.
		_, err := comment.NewService(r.engine.DB, r.engine.Bus, r.engine.Audit).ForAutomation(r.tx).
			Create(ctx, p, &actor, ref, a.Params["body"])
		return err
	case ActionCreateSubtask:
		title := strings.TrimSpace(a.Params["title"])
		if title == "" {
			title = defaultSubtaskTitle
		}
		in := issue.NewIssue{Title: title, Type: issue.TypeSubtask, Priority: issue.PriorityMedium, ParentID: &ref.ID}
		if strings.TrimSpace(a.Params["assigneeId"]) != "" {
			id, err := param(a, "assigneeId")
			if err != nil {
				return err
			}
			in.AssigneeID = &id
		}
		_, err := issues.Create(ctx, p, actor, in)
		return err
	}
	return fmt.Errorf("%w: unknown action type %q", errRefused, a.Type)
}

// notify queues an AUTOMATION notification through the notification pipeline (its
// worker applies preferences, pushes it live and mails it) for the recipient named,
// else the issue's assignee as it is now, else its reporter.
func (r *run) notify(ctx context.Context, a Action) error {
	var cur struct {
		AssigneeID *uuid.UUID `bun:"assignee_id"`
		ReporterID uuid.UUID  `bun:"reporter_id"`
		Title      string     `bun:"title"`
	}
	err := r.tx.NewSelect().Table("issues").Column("assignee_id", "reporter_id", "title").Where("id = ?", r.subj.ID).Scan(ctx, &cur)
	if err != nil {
		if store.IsNotFound(err) {
			return issue.ErrNotFound
		}
		return fmt.Errorf("read issue: %w", err)
	}
	recipient := cur.ReporterID
	if cur.AssigneeID != nil {
		recipient = *cur.AssigneeID
	}
	if strings.TrimSpace(a.Params["recipientId"]) != "" {
		if recipient, err = param(a, "recipientId"); err != nil {
			return err
		}
	}
	if recipient == store.AutomationUserID {
		return nil // the reporter of a subtask a rule created: nobody to tell
	}
	msg := strings.TrimSpace(a.Params["message"])
	if msg == "" {
		msg = defaultNotification
	}
	return r.engine.Bus.Enqueue(ctx, r.tx, river.InsertManyParams{Args: jobs.NotifyEvent{
		Event: jobs.NotifyDirect, Type: NotificationType, ProjectID: r.subj.ProjectID, ProjectKey: r.subj.ProjectKey,
		IssueID: r.subj.ID, IssueKey: r.subj.IssueKey, IssueTitle: cur.Title, Recipients: []uuid.UUID{recipient},
		Args: map[string]string{"rule": r.rule.Name, "message": msg},
	}})
}

// param reads the id parameter k of a (validated when the rule was saved).
func param(a Action, k string) (uuid.UUID, error) {
	id, ok := parseID(strings.TrimSpace(a.Params[k]))
	if !ok {
		return uuid.Nil, fmt.Errorf("%w: %s is not an id", errRefused, k)
	}
	return id, nil
}

// person is the creator of an acting rule, as the run-time checks and the workflow's
// role guards need them.
type person struct {
	ID         uuid.UUID `bun:"id"`
	Active     bool      `bun:"active"`
	Deleted    bool      `bun:"deleted"`
	SystemRole string    `bun:"system_role"`
	MemberRole string    `bun:"member_role"`
}

// people are the creators of the acting rules of one event, by id.
type people map[uuid.UUID]person

// loadActors reads, in one query, the creators of the acting rules with their system
// role and their role in the issue's project.
func loadActors(ctx context.Context, db bun.IDB, subj *subject, rules []*Rule) (people, error) {
	var ids []uuid.UUID
	for _, r := range rules {
		if r.CreatedBy != nil {
			ids = append(ids, *r.CreatedBy)
		}
	}
	if len(ids) == 0 {
		return people{}, nil
	}
	var rows []person
	err := db.NewRaw(`SELECT u.id, u.active, u.deleted_at IS NOT NULL AS deleted, u.system_role,
			CASE WHEN p.owner_id = u.id THEN 'ADMIN' ELSE coalesce(pm.role, '') END AS member_role
		FROM users AS u JOIN projects AS p ON p.id = ?
		LEFT JOIN project_members AS pm ON pm.project_id = p.id AND pm.user_id = u.id
		WHERE u.id IN (?)`, subj.ProjectID, bun.In(ids)).Scan(ctx, &rows)
	if err != nil && !store.IsNotFound(err) {
		return nil, fmt.Errorf("read rule creators: %w", err)
	}
	out := make(people, len(rows))
	for _, p := range rows {
		out[p.ID] = p
	}
	return out, nil
}

// AutomationEmail is what the audit log and webhooks show as the e-mail of changes a
// rule made (as "system" for the server's own).
const AutomationEmail = "automation"

// AutomationName is the built-in automation user's display name.
const AutomationName = "Automation"

// actorOf is who rule r's changes are made as: the built-in automation user, never a
// person, with the project role of the rule's creator (a SYSTEM rule's creator, a
// system ADMIN, counts as project ADMIN) for the workflow's role guards. The audit
// entries and activity rows of the change name the rule and its creator besides.
func (ps people) actorOf(r *Rule) issue.Actor {
	role := ""
	if r.CreatedBy != nil {
		if p, ok := ps[*r.CreatedBy]; ok {
			role = p.MemberRole
			if r.ProjectID == nil && p.SystemRole == "ADMIN" {
				role = "ADMIN"
			}
		}
	}
	return issue.Actor{Actor: audit.Actor{UserID: store.AutomationUserID, Email: AutomationEmail},
		DisplayName: AutomationName, MemberRole: role}
}
