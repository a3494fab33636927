package automation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/automation/creator"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// Engine is the worker's half of automation: it evaluates the rules of one triggering
// event and runs the actions of those that fire, through the same domain services (and
// so the same event consumers) a request uses.
type Engine struct {
	DB  *store.DB
	Bus *event.Bus
	// Audit records the comments' audit entries (CREATE_COMMENT goes through the
	// comment service, which records its own).
	Audit *audit.Recorder
	// Limits are the chain budget and the project rate.
	Limits Limits
	// WebhookAttempts is the MaxAttempts of SEND_WEBHOOK jobs: one plus one per
	// TW_WEBHOOK_RETRY_DELAYS entry (0: the default schedule's).
	WebhookAttempts int

	cache ruleCache
}

// Outcome is what became of one rule for one event.
type Outcome struct {
	RuleID  uuid.UUID
	Status  string
	Detail  string
	Actions []ActionOutcome
	// Latency is from the event to the commit of the rule's execution row.
	Latency time.Duration
	// Limit names what stopped a SKIPPED rule that would have acted: LimitBudget,
	// LimitRate or LimitCreator; "" otherwise.
	Limit string
}

// What can stop a rule that would act (Outcome.Limit).
const (
	LimitBudget  = "budget"
	LimitRate    = "rate"
	LimitCreator = "creator"
)

// LimitKinds lists them, for the metric's labels.
var LimitKinds = []string{LimitBudget, LimitRate, LimitCreator}

// ActionOutcome is one action run: its type and whether it succeeded. A rule that
// failed reports the action that failed last; its earlier actions were rolled back
// with it and count as failed too.
type ActionOutcome struct {
	Type string
	OK   bool
}

// subject is the issue an event is about, with what conditions and actions need of
// it and its project, read when the job runs.
type subject struct {
	Facts
	ID         uuid.UUID
	ProjectKey string
	WorkflowID *uuid.UUID
	IssueKey   string
	Title      string
	ReporterID uuid.UUID
}

// errHandled ends the transaction of a rule whose execution row already exists: an
// earlier run of the same job committed it (or is committing it now).
var errHandled = errors.New("automation: rule already handled for this event")

// Evaluate evaluates the enabled rules of job's trigger for its project (its own and
// SYSTEM ones, read in one query, and kept while the rule stamps read with the issue
// are unchanged) and acts on those that fire. Every rule ends in one
// execution row, unique per (event, rule): rules that do not act share one statement,
// each rule that acts commits its actions with its row in one transaction. A rule
// whose action the domain refuses (a workflow guard, a member check) gets a FAILED row
// and the other rules go on; an infrastructure error is returned once every rule had
// its turn, so River retries the job and only the rules without a row run again.
func (e *Engine) Evaluate(ctx context.Context, job jobs.AutomationEvaluate) ([]Outcome, error) {
	subj, st, err := loadSubject(ctx, e.DB, job.ProjectID, job.IssueID)
	if err != nil {
		return nil, err
	}
	rules, err := e.rulesFor(ctx, job.ProjectID, job.Trigger, st)
	if err != nil {
		return nil, err
	}
	matching := make([]*Rule, 0, len(rules))
	for i := range rules {
		if rules[i].matchesPayload(job.Extras) {
			matching = append(matching, &rules[i])
		}
	}
	if len(matching) == 0 {
		return nil, nil
	}
	return e.evaluateRules(ctx, job, subj, matching)
}

// evaluateRules evaluates the rules matching job's trigger and filters on its issue
// (subj, nil once deleted) and acts on those that fire: Evaluate's work once the rules
// are known, and a scheduled run's for each issue.
func (e *Engine) evaluateRules(ctx context.Context, job jobs.AutomationEvaluate, subj *subject, matching []*Rule) ([]Outcome, error) {
	var err error
	if subj == nil {
		skips := make([]skip, len(matching))
		for i, r := range matching {
			skips[i] = skip{rule: r, detail: "the issue no longer exists"}
		}
		return e.skip(ctx, job, skips)
	}

	var (
		skips  []skip
		acting []*Rule
	)
	var statuses map[uuid.UUID]bool // of the issue's workflow, read when a SYSTEM rule needs them
	for _, r := range matching {
		switch {
		case !r.Root.Matches(subj.Facts):
			skips = append(skips, skip{rule: r, detail: "conditions not met"})
		case job.ChainDepth > MaxChainDepth:
			skips = append(skips, skip{rule: r, detail: fmt.Sprintf(
				"chain depth limit %d reached: this change was made by a chain of %d rule runs; actions not run",
				MaxChainDepth, job.ChainDepth)})
		case r.ProjectID == nil:
			if statuses == nil {
				if statuses, err = workflowStatuses(ctx, e.DB.Bun, subj.WorkflowID); err != nil {
					return nil, err
				}
			}
			if id, ok := foreignStatus(r, statuses); ok {
				skips = append(skips, skip{rule: r, detail: fmt.Sprintf(
					"status %s is not in the workflow of project %s", id, subj.ProjectKey)})
				continue
			}
			acting = append(acting, r)
		default:
			acting = append(acting, r)
		}
	}

	// A rule acts only while its creator may: otherwise it is skipped and disabled.
	acting, skips, err = e.checkCreators(ctx, acting, skips)
	if err != nil {
		return nil, err
	}
	outcomes, err := e.skip(ctx, job, skips)
	if err != nil {
		return nil, err
	}
	var actors people
	if len(acting) > 0 {
		if actors, err = loadActors(ctx, e.DB.Bun, subj, acting); err != nil {
			return outcomes, err
		}
	}
	var infra []error
	for _, r := range acting {
		o, err := e.act(ctx, job, r, subj, actors)
		if err != nil {
			infra = append(infra, fmt.Errorf("rule %s: %w", r.ID, err))
			continue
		}
		if o != nil {
			outcomes = append(outcomes, *o)
		}
	}
	return outcomes, errors.Join(infra...)
}

// checkCreators moves the acting rules whose creator may no longer have them act
// (creator.Refusals) to the skipped ones, with the reason, and disables them (audited),
// so they stay off until an admin re-enables them or takes them over.
func (e *Engine) checkCreators(ctx context.Context, acting []*Rule, skips []skip) ([]*Rule, []skip, error) {
	if len(acting) == 0 {
		return acting, skips, nil
	}
	ids := make([]uuid.UUID, len(acting))
	for i, r := range acting {
		ids[i] = r.ID
	}
	refusals, err := creator.Refusals(ctx, e.DB.Bun, ids)
	if err != nil || len(refusals) == 0 {
		return acting, skips, err
	}
	kept := make([]*Rule, 0, len(acting))
	var off []uuid.UUID
	for _, r := range acting {
		reason, refused := refusals[r.ID]
		if !refused {
			kept = append(kept, r)
			continue
		}
		off = append(off, r.ID)
		skips = append(skips, skip{rule: r, limit: LimitCreator, detail: "not run: " + reason +
			"; the rule is disabled until an admin re-enables it or takes it over"})
	}
	err = store.InTx(ctx, e.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
		return creator.Disable(ctx, tx, e.Audit, off)
	})
	return kept, skips, err
}

// skip is a rule that does not act on this event, and why (limit: what stopped it,
// when it would have acted).
type skip struct {
	rule   *Rule
	detail string
	limit  string
}

// skip writes the SKIPPED rows of rules that do not act, in one statement; rows an
// earlier run of the job wrote stay as they are.
func (e *Engine) skip(ctx context.Context, job jobs.AutomationEvaluate, skips []skip) ([]Outcome, error) {
	if len(skips) == 0 {
		return nil, nil
	}
	rules, statuses, details := make([]uuid.UUID, len(skips)), make([]string, len(skips)), make([]string, len(skips))
	for i, s := range skips {
		rules[i], statuses[i], details[i] = s.rule.ID, StatusSkipped, s.detail
	}
	written, err := writeExecutions(ctx, e.DB, job, rules, statuses, details)
	if err != nil {
		return nil, err
	}
	latency := time.Since(job.EventAt)
	byRule := make(map[uuid.UUID]skip, len(skips))
	for _, s := range skips {
		byRule[s.rule.ID] = s
	}
	out := make([]Outcome, 0, len(written))
	for _, id := range written {
		s := byRule[id]
		out = append(out, Outcome{RuleID: id, Status: StatusSkipped, Detail: s.detail, Limit: s.limit, Latency: latency})
	}
	return out, nil
}

// act runs one rule's actions in one transaction with its SUCCESS row. A domain
// refusal rolls them back and writes a FAILED row instead; nil, nil means an earlier
// run of the job already handled the rule.
func (e *Engine) act(ctx context.Context, job jobs.AutomationEvaluate, r *Rule, subj *subject, actors people) (*Outcome, error) {
	types := make([]string, len(r.Actions))
	for i, a := range r.Actions {
		types[i] = a.Type
	}
	detail := "no actions"
	if len(types) > 0 {
		detail = "ran " + strings.Join(types, ", ")
	}
	var done []ActionOutcome
	failed := -1
	err := store.InTx(ctx, e.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
		wrote, err := writeExecution(ctx, tx.Tx, job, r.ID, StatusSuccess, detail)
		if err != nil {
			return err
		}
		if !wrote {
			return errHandled
		}
		if err := e.Limits.spend(ctx, tx, job, len(r.Actions)); err != nil {
			return err
		}
		// Changes made here publish their events at the next chain depth, in the chain;
		// their audit entries, activity rows and comments name the rule and its creator.
		actx := WithChain(ctx, chainOf(job), job.ChainDepth+1)
		actx = audit.WithAutomation(actx, audit.Automation{RuleID: r.ID, RuleName: r.Name, CreatorID: r.CreatedBy})
		if err := markRule(ctx, tx, r); err != nil {
			return err
		}
		run := &run{engine: e, tx: tx, rule: r, subj: subj, people: actors, job: job}
		done = done[:0]
		for i, a := range r.Actions {
			if err := run.action(actx, a); err != nil {
				failed = i
				return err
			}
			done = append(done, ActionOutcome{Type: a.Type, OK: true})
		}
		err = e.Bus.Emit(actx, tx, Fired{RuleID: r.ID, RuleName: r.Name, ProjectID: subj.ProjectID, IssueID: subj.ID,
			IssueKey: subj.IssueKey, Trigger: job.Trigger, EventID: job.EventID, ChainDepth: job.ChainDepth})
		if err != nil {
			return err
		}
		return e.Limits.charge(ctx, tx, job, len(r.Actions))
	})
	if limit, reason, ok := limited(err); ok {
		// Rolled back whole; the rule is SKIPPED with the limit it reached.
		wrote, werr := writeExecution(ctx, e.DB.SQL, job, r.ID, StatusSkipped, reason)
		if werr != nil || !wrote {
			return nil, werr
		}
		return &Outcome{RuleID: r.ID, Status: StatusSkipped, Detail: reason, Limit: limit, Latency: time.Since(job.EventAt)}, nil
	}
	switch {
	case err == nil:
		return &Outcome{RuleID: r.ID, Status: StatusSuccess, Detail: detail, Actions: done, Latency: time.Since(job.EventAt)}, nil
	case errors.Is(err, errHandled):
		return nil, nil
	case failed < 0 || !Refusal(err):
		return nil, err
	}
	a := r.Actions[failed]
	reason := truncate(fmt.Sprintf("actions[%d] %s: %s", failed, a.Type, describe(err)), executionDetailMaxRunes)
	wrote, werr := writeExecution(ctx, e.DB.SQL, job, r.ID, StatusFailed, reason)
	if werr != nil {
		return nil, werr
	}
	if !wrote {
		return nil, nil
	}
	acts := make([]ActionOutcome, 0, failed+1)
	for _, d := range done {
		acts = append(acts, ActionOutcome{Type: d.Type})
	}
	acts = append(acts, ActionOutcome{Type: a.Type})
	return &Outcome{RuleID: r.ID, Status: StatusFailed, Detail: reason, Actions: acts, Latency: time.Since(job.EventAt)}, nil
}

// markRule sets the transaction's rule settings, which the rule_id and
// rule_creator_id columns of comments and issue_activities default to (migration 0031).
func markRule(ctx context.Context, tx bun.Tx, r *Rule) error {
	creator := ""
	if r.CreatedBy != nil {
		creator = r.CreatedBy.String()
	}
	_, err := tx.Tx.ExecContext(ctx, `SELECT set_config('taskweave.rule_id', $1, true), set_config('taskweave.rule_creator_id', $2, true)`,
		r.ID.String(), creator)
	if err != nil {
		return fmt.Errorf("mark rule transaction: %w", err)
	}
	return nil
}

// subjectSQL reads an issue with its project, and the rule stamps of the project ($1)
// and of SYSTEM ($2), in one statement; the issue's columns are NULL once it is
// deleted. Positional, so each connection prepares it once: it runs for every event,
// on the Keyed pool (key lookups only), whose sessions also keep its generic plan
// instead of planning it anew each time as a worker's ordinary sessions do.
const subjectSQL = `SELECT coalesce((SELECT stamp FROM automation_stamps WHERE scope = $1), 0),
		coalesce((SELECT stamp FROM automation_stamps WHERE scope = $2), 0),
		i.id, i.project_id, p.key, p.workflow_id, i.key, i.title, i.type, i.priority, i.assignee_id, i.status_id,
		i.story_points, i.reporter_id
	FROM (SELECT 1) AS one LEFT JOIN issues AS i ON i.id = $3 LEFT JOIN projects AS p ON p.id = i.project_id`

// loadSubject reads the event's issue with its project (nil when it was deleted
// since), and the rule stamps of its project and of SYSTEM.
func loadSubject(ctx context.Context, db *store.DB, projectID, issueID uuid.UUID) (*subject, stamps, error) {
	var (
		st stamps
		r  struct {
			id, project, workflow, assignee, status, reporter *uuid.UUID
			projectKey, key, title, typ, priority             *string
			points                                            *int
		}
	)
	err := db.Keyed.QueryRow(ctx, subjectSQL, store.UUID(projectID), store.UUID(uuid.Nil), store.UUID(issueID)).
		Scan(&st.project, &st.system, &r.id, &r.project, &r.projectKey, &r.workflow, &r.key, &r.title, &r.typ,
			&r.priority, &r.assignee, &r.status, &r.points, &r.reporter)
	if err != nil {
		return nil, st, fmt.Errorf("read issue %s: %w", issueID, err)
	}
	if r.id == nil || r.project == nil || r.status == nil || r.reporter == nil {
		return nil, st, nil // deleted since the event
	}
	s := &subject{ID: *r.id, ProjectKey: deref(r.projectKey), WorkflowID: r.workflow, IssueKey: deref(r.key),
		Title: deref(r.title), ReporterID: *r.reporter}
	s.Facts = Facts{ProjectID: *r.project, Type: deref(r.typ), Priority: deref(r.priority), AssigneeID: r.assignee,
		StatusID: *r.status, StoryPoints: r.points}
	return s, st, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// workflowStatuses is the set of status ids of a workflow (empty without one).
func workflowStatuses(ctx context.Context, db bun.IDB, workflowID *uuid.UUID) (map[uuid.UUID]bool, error) {
	out := map[uuid.UUID]bool{}
	if workflowID == nil {
		return out, nil
	}
	var ids []uuid.UUID
	err := db.NewSelect().Table("workflow_statuses").Column("id").Where("workflow_id = ?", *workflowID).Scan(ctx, &ids)
	if err != nil && !store.IsNotFound(err) {
		return nil, fmt.Errorf("read workflow statuses: %w", err)
	}
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// foreignStatus finds a SET_STATUS of a SYSTEM rule naming a status outside the
// issue's workflow: such a rule was written for other projects.
func foreignStatus(r *Rule, statuses map[uuid.UUID]bool) (string, bool) {
	for _, a := range r.Actions {
		if a.Type != ActionSetStatus {
			continue
		}
		id, ok := parseID(strings.TrimSpace(a.Params["statusId"]))
		if !ok || !statuses[id] {
			return a.Params["statusId"], true
		}
	}
	return "", false
}

// newID is a time-ordered (v7) UUID: the indexes on executions grow at their end.
func newID() uuid.UUID {
	if id, err := uuid.NewV7(); err == nil {
		return id
	}
	return uuid.New()
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// describe is the reason a refused action gives in the execution log.
func describe(err error) string {
	return strings.TrimPrefix(err.Error(), "automation: ")
}
