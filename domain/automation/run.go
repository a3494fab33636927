package automation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/automation/creator"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// Run statuses.
const (
	RunPending = "PENDING"
	RunDone    = "DONE"
	RunSkipped = "SKIPPED"
)

// ScanBatch is how many due rules one scan transaction takes.
const ScanBatch = 200

// Run is one due slot of a scheduled rule.
type Run struct {
	ID         uuid.UUID
	RuleID     uuid.UUID
	ProjectID  uuid.UUID
	Slot       time.Time
	Status     string
	Matched    int
	Truncated  bool
	Succeeded  int
	Skipped    int
	Failed     int
	Detail     *string
	CreatedAt  time.Time
	FinishedAt *time.Time
}

type runRow struct {
	bun.BaseModel `bun:"table:automation_runs"`

	ID         uuid.UUID  `bun:"id,pk,type:uuid"`
	RuleID     uuid.UUID  `bun:"rule_id,type:uuid"`
	ProjectID  uuid.UUID  `bun:"project_id,type:uuid"`
	Slot       time.Time  `bun:"slot"`
	Status     string     `bun:"status"`
	Matched    int        `bun:"matched"`
	Truncated  bool       `bun:"truncated"`
	Succeeded  int        `bun:"succeeded"`
	Skipped    int        `bun:"skipped"`
	Failed     int        `bun:"failed"`
	Detail     *string    `bun:"detail"`
	CreatedAt  time.Time  `bun:"created_at"`
	FinishedAt *time.Time `bun:"finished_at"`
}

func (r runRow) run() Run {
	return Run{ID: r.ID, RuleID: r.RuleID, ProjectID: r.ProjectID, Slot: r.Slot, Status: r.Status, Matched: r.Matched,
		Truncated: r.Truncated, Succeeded: r.Succeeded, Skipped: r.Skipped, Failed: r.Failed, Detail: r.Detail,
		CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt}
}

// Enqueuer inserts River jobs in a transaction (the event bus's Enqueue).
type Enqueuer interface {
	Enqueue(ctx context.Context, tx bun.Tx, params ...river.InsertManyParams) error
}

// ScanSchedules starts the runs of the scheduled rules due at now: for each rule whose
// next_run_at has passed it inserts one automation_runs row for that slot (unique per
// rule and slot) with the run's job, and advances next_run_at to the first slot after
// now, all in one transaction. However long the workers were down, a rule runs once
// for the slot it was due at, not once per slot missed. A disabled rule's slots pass
// without a run. Rows another scan holds are skipped (it advances them), so scans on
// several workers at once start each run once. It returns the runs started.
func ScanSchedules(ctx context.Context, db *bun.DB, q Enqueuer, now time.Time) (int, error) {
	started := 0
	for {
		n, more, err := scanBatch(ctx, db, q, now)
		started += n
		if err != nil || !more {
			return started, err
		}
	}
}

func scanBatch(ctx context.Context, db *bun.DB, q Enqueuer, now time.Time) (int, bool, error) {
	started, taken := 0, 0
	err := store.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		started, taken = 0, 0
		var due []struct {
			RuleID    uuid.UUID  `bun:"rule_id,type:uuid"`
			NextRunAt time.Time  `bun:"next_run_at"`
			Schedule  *string    `bun:"schedule"`
			Timezone  *string    `bun:"timezone"`
			Enabled   bool       `bun:"enabled"`
			ProjectID *uuid.UUID `bun:"project_id,type:uuid"`
		}
		err := tx.NewRaw(`SELECT s.rule_id, s.next_run_at, r.schedule, r.timezone, r.enabled, r.project_id
			FROM automation_schedules AS s JOIN automation_rules AS r ON r.id = s.rule_id
			WHERE s.next_run_at <= ? ORDER BY s.next_run_at LIMIT ? FOR UPDATE OF s SKIP LOCKED`, now, ScanBatch).Scan(ctx, &due)
		if err != nil && !store.IsNotFound(err) {
			return fmt.Errorf("read due schedules: %w", err)
		}
		taken = len(due)
		var params []river.InsertManyParams
		for _, d := range due {
			s, err := ParseSchedule(deref(d.Schedule), deref(d.Timezone))
			if err != nil || d.ProjectID == nil { // saved before a stricter rule: stop it
				if _, err := tx.ExecContext(ctx, "DELETE FROM automation_schedules WHERE rule_id = ?", d.RuleID); err != nil {
					return fmt.Errorf("drop schedule: %w", err)
				}
				continue
			}
			if _, err := tx.ExecContext(ctx, "UPDATE automation_schedules SET next_run_at = ? WHERE rule_id = ?",
				s.Next(now), d.RuleID); err != nil {
				return fmt.Errorf("advance schedule: %w", err)
			}
			if !d.Enabled {
				continue
			}
			var id uuid.UUID
			err = tx.NewRaw(`INSERT INTO automation_runs (id, rule_id, project_id, slot) VALUES (?, ?, ?, ?)
				ON CONFLICT (rule_id, slot) DO NOTHING RETURNING id`, newID(), d.RuleID, *d.ProjectID, d.NextRunAt).Scan(ctx, &id)
			if store.IsNotFound(err) {
				continue // this slot has its run already
			}
			if err != nil {
				return fmt.Errorf("insert run: %w", err)
			}
			params = append(params, river.InsertManyParams{Args: jobs.AutomationRun{RunID: id, RuleID: d.RuleID, ProjectID: *d.ProjectID}})
			started++
		}
		return q.Enqueue(ctx, tx, params...)
	})
	if err != nil {
		return 0, false, err
	}
	return started, taken == ScanBatch, nil
}

// RunOutcome is what a scheduled run did, for the metrics.
type RunOutcome struct {
	// Status is the run's final status ("" when it was finished before).
	Status    string
	Truncated bool
	Outcomes  []Outcome
}

// RunScheduled runs one slot of a scheduled rule: the rule's conditions and actions on
// each issue its filter matches (at most MaxRunIssues, in the issue list's order), each
// issue one evaluation as an event's, with its own execution row (run_id set), its own
// chain budget and the project's rate, after the same creator check. A retried run
// skips the issues that have their row already. An infrastructure error is returned
// once every issue had its turn, so River retries the run.
func (e *Engine) RunScheduled(ctx context.Context, runID uuid.UUID) (RunOutcome, error) {
	var row runRow
	err := e.DB.Bun.NewSelect().Model(&row).Where("id = ?", runID).Scan(ctx)
	if store.IsNotFound(err) {
		return RunOutcome{}, nil // deleted with its rule
	}
	if err != nil {
		return RunOutcome{}, fmt.Errorf("read run: %w", err)
	}
	if row.Status != RunPending {
		return RunOutcome{}, nil
	}
	rules, err := loadRules(ctx, e.DB.Bun, func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("r.id = ?", row.RuleID) })
	if err != nil {
		return RunOutcome{}, err
	}
	if len(rules) == 0 {
		return RunOutcome{}, nil
	}
	r := &rules[0]
	if !r.Enabled {
		return e.finishRun(ctx, runID, RunSkipped, "the rule is disabled", false, 0, nil)
	}
	refusals, err := creator.Refusals(ctx, e.DB.Bun, []uuid.UUID{r.ID})
	if err != nil {
		return RunOutcome{}, err
	}
	if reason, refused := refusals[r.ID]; refused {
		err := store.InTx(ctx, e.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
			return creator.Disable(ctx, tx, e.Audit, []uuid.UUID{r.ID})
		})
		if err != nil {
			return RunOutcome{}, err
		}
		o, err := e.finishRun(ctx, runID, RunSkipped, "not run: "+reason+
			"; the rule is disabled until an admin re-enables it or takes it over", false, 0, nil)
		o.Outcomes = []Outcome{{RuleID: r.ID, Status: StatusSkipped, Limit: LimitCreator}}
		return o, err
	}
	ids, truncated, err := e.runIssues(ctx, row.ProjectID, r)
	if err != nil {
		return RunOutcome{}, err
	}
	var (
		outcomes []Outcome
		infra    []error
	)
	for _, issueID := range ids {
		job := jobs.AutomationEvaluate{EventID: runEventID(runID, issueID), Trigger: TriggerScheduled, ProjectID: row.ProjectID,
			IssueID: issueID, EventAt: row.Slot, RunID: &runID}
		job.ChainID = job.EventID
		subj, _, err := loadSubject(ctx, e.DB, row.ProjectID, issueID)
		if err != nil {
			infra = append(infra, err)
			continue
		}
		if subj != nil && subj.ProjectID != row.ProjectID {
			subj = nil // moved to another project since the filter read it
		}
		o, err := e.evaluateRules(ctx, job, subj, []*Rule{r})
		outcomes = append(outcomes, o...)
		if err != nil {
			infra = append(infra, err)
		}
	}
	if len(infra) > 0 {
		return RunOutcome{Outcomes: outcomes}, errors.Join(infra...)
	}
	detail := ""
	if truncated {
		detail = fmt.Sprintf("the filter matched more than %d issues: the first %d in the issue list's order were run", MaxRunIssues, MaxRunIssues)
	}
	o, err := e.finishRun(ctx, runID, RunDone, detail, truncated, len(ids), outcomes)
	return o, err
}

// runEventID is the event id of a run's evaluation of one issue: the same on every
// attempt of the run, so an issue's execution (unique per event and rule) is written,
// and its actions applied, once.
func runEventID(runID, issueID uuid.UUID) uuid.UUID { return uuid.NewSHA1(runID, issueID[:]) }

// runIssues reads the ids of the issues r's filter matches, through the issue list
// itself (its parser and its query), with r's creator as assigneeMe's "me".
func (e *Engine) runIssues(ctx context.Context, projectID uuid.UUID, r *Rule) ([]uuid.UUID, bool, error) {
	var p issue.Project
	err := e.DB.Bun.NewSelect().Table("projects").Column("id", "key", "workflow_id").Where("id = ?", projectID).
		Scan(ctx, &p.ID, &p.Key, &p.WorkflowID)
	if store.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read project: %w", err)
	}
	me := uuid.Nil
	if r.CreatedBy != nil {
		me = *r.CreatedBy
	}
	f, err := issue.ParseFilter(filterQuery(decodeFilter(r.Filter)), me)
	if err != nil {
		return nil, false, fmt.Errorf("filter of rule %s: %w", r.ID, err)
	}
	views, _, err := issue.NewService(e.DB, e.Bus).List(ctx, p, f, 0, MaxRunIssues+1)
	if err != nil {
		return nil, false, err
	}
	truncated := len(views) > MaxRunIssues
	if truncated {
		views = views[:MaxRunIssues]
	}
	ids := make([]uuid.UUID, len(views))
	for i, v := range views {
		ids[i] = v.ID
	}
	return ids, truncated, nil
}

// finishRun records the run's end with its counts, read from its executions.
func (e *Engine) finishRun(ctx context.Context, runID uuid.UUID, status, detail string, truncated bool, matched int, outcomes []Outcome) (RunOutcome, error) {
	var d *string
	if detail != "" {
		d = &detail
	}
	res, err := e.DB.Bun.ExecContext(ctx, `UPDATE automation_runs AS r SET status = ?, detail = ?, truncated = ?, matched = ?,
			succeeded = c.succeeded, skipped = c.skipped, failed = c.failed, finished_at = clock_timestamp()
		FROM (SELECT count(*) FILTER (WHERE status = 'SUCCESS') AS succeeded, count(*) FILTER (WHERE status = 'SKIPPED') AS skipped,
			count(*) FILTER (WHERE status = 'FAILED') AS failed FROM automation_executions WHERE run_id = ?) AS c
		WHERE r.id = ? AND r.status = 'PENDING'`, status, d, truncated, matched, runID, runID)
	if err != nil {
		return RunOutcome{}, fmt.Errorf("finish run: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return RunOutcome{Outcomes: outcomes}, nil
	}
	return RunOutcome{Status: status, Truncated: truncated, Outcomes: outcomes}, nil
}

// Runs returns one page of a scheduled rule's runs, latest slot first, and their total.
func (s *Service) Runs(ctx context.Context, sc Scope, ruleID uuid.UUID, after *store.After, offset, limit int) ([]Run, int, error) {
	exists, err := sc.where(s.db.NewSelect().TableExpr("automation_rules AS r").Where("r.id = ?", ruleID)).Exists(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("find rule: %w", err)
	}
	if !exists {
		return nil, 0, ErrNotFound
	}
	q := s.db.NewSelect().Model((*runRow)(nil)).Where("rule_id = ?", ruleID)
	count, err := q.Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("count runs: %w", err)
	}
	n := int(count)
	out := []Run{}
	if n <= offset {
		return out, n, nil
	}
	var rows []runRow
	if after != nil {
		q = q.Where("(slot, id) < (?, ?)", after.Time, after.ID)
	}
	if err := q.OrderExpr("slot DESC, id DESC").Offset(int64(offset)).Limit(int64(limit)).Scan(ctx, &rows); err != nil {
		return nil, 0, fmt.Errorf("list runs: %w", err)
	}
	for _, r := range rows {
		out = append(out, r.run())
	}
	return out, n, nil
}
