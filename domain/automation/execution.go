package automation

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// The statements of the execution log take positional parameters, so each connection
// prepares them once: an event writes one row per rule its trigger loads, a few dozen
// in a large project, and bun's inlined values would have every one parsed and planned
// anew. The skipped rows' statement runs on the Keyed pool (it reads and writes by key
// only), whose sessions keep its generic plan: a worker's ordinary sessions plan every
// execution again (plan_cache_mode=force_custom_plan, see store.OpenWorker).
const (
	// insertExecutionsSQL writes the rows of one event's rules, one per array element;
	// rows an earlier run of the job wrote stay as they are, and a rule deleted since it
	// was read gets none (no foreign key: see migration 0021). It answers the rules
	// whose row it wrote.
	//
	// It commits without waiting for its WAL to reach the disk (synchronous_commit off
	// for its own implicit transaction): the job that wrote the rows is completed by a
	// later, synchronous commit, whose flush takes these rows' WAL with it, so a crash
	// loses them only with the job's completion, and the job's rerun writes them again.
	// The rows have no side effect to lose (the rules that act commit synchronously).
	// Every evaluation writes a few dozen of them; waiting for the flush held the worker
	// slot (and cost the backend an fdatasync) for each.
	insertExecutionsSQL = `WITH async AS (SELECT set_config('synchronous_commit', 'off', true))
	INSERT INTO automation_executions
		(id, rule_id, status, detail, event_id, project_id, issue_id, event_type, chain_depth, event_at, run_id)
	SELECT t.id, t.rule_id, t.status, t.detail, $5::uuid, $6::uuid, $7::uuid, $8::text, $9::int, $10::timestamptz, $11::uuid
	FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) AS t(id, rule_id, status, detail), async
	WHERE EXISTS (SELECT 1 FROM automation_rules AS r WHERE r.id = t.rule_id)
	ON CONFLICT (event_id, rule_id) DO NOTHING
	RETURNING rule_id`
	// insertExecutionSQL writes one rule's row; none when it exists or the rule was
	// deleted since it was read.
	insertExecutionSQL = `INSERT INTO automation_executions
		(id, rule_id, status, detail, event_id, project_id, issue_id, event_type, chain_depth, event_at, run_id)
	SELECT $1::uuid, $2::uuid, $3::text, $4::text, $5::uuid, $6::uuid, $7::uuid, $8::text, $9::int, $10::timestamptz, $11::uuid
	WHERE EXISTS (SELECT 1 FROM automation_rules AS r WHERE r.id = $2::uuid)
	ON CONFLICT (event_id, rule_id) DO NOTHING`
)

// eventAt is the job's event time, NULL when it has none (a job of an older release).
func eventAt(job jobs.AutomationEvaluate) *time.Time {
	if job.EventAt.IsZero() {
		return nil
	}
	at := job.EventAt
	return &at
}

// writeExecutions writes one row per rule (status, detail) of job's event in one
// statement and returns the rules whose row it wrote.
func writeExecutions(ctx context.Context, db *store.DB, job jobs.AutomationEvaluate, rules []uuid.UUID, statuses, details []string) ([]uuid.UUID, error) {
	ids := make([]uuid.UUID, len(rules))
	for i := range rules {
		ids[i] = newID()
	}
	rows, err := db.Keyed.Query(ctx, insertExecutionsSQL, store.UUIDs(ids), store.UUIDs(rules), statuses, details,
		store.UUID(job.EventID), store.UUID(job.ProjectID), store.UUID(job.IssueID), job.Trigger, job.ChainDepth, eventAt(job), store.NullUUID(job.RunID))
	if err != nil {
		return nil, fmt.Errorf("write executions: %w", err)
	}
	defer rows.Close()
	var written []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(store.UUIDDest(&id)); err != nil {
			return nil, fmt.Errorf("write executions: %w", err)
		}
		written = append(written, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("write executions: %w", err)
	}
	return written, nil
}

// writeExecution writes one rule's row on db (the rule's *sql.Tx, or the *sql.DB) and
// reports whether it did: false means an earlier run of the job wrote it.
func writeExecution(ctx context.Context, db bun.IConn, job jobs.AutomationEvaluate, ruleID uuid.UUID, status, detail string) (bool, error) {
	var d *string
	if detail != "" {
		d = &detail
	}
	res, err := db.ExecContext(ctx, insertExecutionSQL, store.UUID(newID()), store.UUID(ruleID), status, d,
		store.UUID(job.EventID), store.UUID(job.ProjectID), store.UUID(job.IssueID), job.Trigger, job.ChainDepth, eventAt(job), store.NullUUID(job.RunID))
	if err != nil {
		return false, fmt.Errorf("write execution: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
