package automation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// DefaultChainBudget is how many actions the rules of one chain may run when
// TW_AUTOMATION_CHAIN_BUDGET is not set (docs/automation.md#action-budget).
const DefaultChainBudget = 100

// chainRetention is how long a chain's spent budget is kept: longer than any
// evaluation job of the chain can wait for its retries.
const chainRetention = 7 * 24 * time.Hour

// Limits bound the work of automation: the depth limit bounds how long a chain is,
// these how wide it is and how much one project may ask of the shared workers.
type Limits struct {
	// ChainBudget is how many actions the rule runs of one chain (a change a person
	// made and every change its rules cause, at any depth) may run in all; 0 is
	// DefaultChainBudget.
	ChainBudget int
	// ProjectRate is how many actions the rules of one project may run per minute,
	// counted in Postgres for every worker; 0 is no limit.
	ProjectRate int
}

func (l Limits) budget() int {
	if l.ChainBudget <= 0 {
		return DefaultChainBudget
	}
	return l.ChainBudget
}

// limitError is a rule that did not act because a limit was reached; its execution is
// SKIPPED with the reason.
type limitError struct{ limit, detail string }

func (e *limitError) Error() string { return "automation: " + e.detail }

// chainOf is the job's chain: ChainID, or the event itself in a job of an older release.
func chainOf(job jobs.AutomationEvaluate) uuid.UUID {
	if job.ChainID != uuid.Nil {
		return job.ChainID
	}
	return job.EventID
}

// spendSQL adds $3 actions to the chain $1 unless that passes the budget $4: no row
// changed means the budget is spent. The row stays locked until the rule commits or
// rolls back (which gives the actions back), so the rules of one chain spend in turn.
const spendSQL = `INSERT INTO automation_chains AS c (chain_id, project_id, actions) VALUES ($1, $2, $3)
	ON CONFLICT (chain_id) DO UPDATE SET actions = c.actions + EXCLUDED.actions
	WHERE c.actions + EXCLUDED.actions <= $4`

// spend takes n actions from the job's chain budget, in the rule's transaction.
func (l Limits) spend(ctx context.Context, tx bun.Tx, job jobs.AutomationEvaluate, n int) error {
	budget := l.budget()
	if n == 0 {
		return nil
	}
	ok := n <= budget
	if ok {
		res, err := tx.Tx.ExecContext(ctx, spendSQL, store.UUID(chainOf(job)), store.UUID(job.ProjectID), n, budget)
		if err != nil {
			return fmt.Errorf("spend chain budget: %w", err)
		}
		affected, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("spend chain budget: %w", err)
		}
		ok = affected > 0
	}
	if !ok {
		return &limitError{limit: LimitBudget, detail: fmt.Sprintf("action budget spent: the chain of rule runs started by one change may run "+
			"%d actions in all (TW_AUTOMATION_CHAIN_BUDGET); this rule's %d not run", budget, n)}
	}
	return nil
}

// rateSQL adds $2 actions to the project's current minute unless that passes the rate $3.
const rateSQL = `INSERT INTO automation_project_rates AS r (project_id, window_start, actions)
	VALUES ($1, date_trunc('minute', clock_timestamp()), $2)
	ON CONFLICT (project_id, window_start) DO UPDATE SET actions = r.actions + EXCLUDED.actions
	WHERE r.actions + EXCLUDED.actions <= $3`

// charge counts n actions against the project's rate, as the rule's last statement:
// the project's row stays locked only for the commit.
func (l Limits) charge(ctx context.Context, tx bun.Tx, job jobs.AutomationEvaluate, n int) error {
	if l.ProjectRate <= 0 || n == 0 {
		return nil
	}
	ok := n <= l.ProjectRate
	if ok {
		res, err := tx.Tx.ExecContext(ctx, rateSQL, store.UUID(job.ProjectID), n, l.ProjectRate)
		if err != nil {
			return fmt.Errorf("charge project rate: %w", err)
		}
		affected, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("charge project rate: %w", err)
		}
		ok = affected > 0
	}
	if !ok {
		return &limitError{limit: LimitRate, detail: fmt.Sprintf("project automation rate reached: the rules of a project may run %d actions "+
			"per minute (TW_AUTOMATION_PROJECT_RATE); this rule's %d not run", l.ProjectRate, n)}
	}
	return nil
}

// limited reports whether err is a limit the rule reached, which, and its reason.
func limited(err error) (string, string, bool) {
	var le *limitError
	if errors.As(err, &le) {
		return le.limit, le.detail, true
	}
	return "", "", false
}

// cleanLimits deletes the spent budgets of chains older than chainRetention and the
// rate windows older than an hour.
func cleanLimits(ctx context.Context, db bun.IDB) error {
	if _, err := db.ExecContext(ctx, "DELETE FROM automation_chains WHERE created_at < now() - make_interval(secs => ?)",
		chainRetention.Seconds()); err != nil {
		return fmt.Errorf("clean automation chains: %w", err)
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM automation_project_rates WHERE window_start < now() - interval '1 hour'"); err != nil {
		return fmt.Errorf("clean automation rates: %w", err)
	}
	return nil
}
