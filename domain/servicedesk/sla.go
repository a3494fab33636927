package servicedesk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// Kinds of SLA report (sla_reports.kind).
const (
	KindResolution = "RESOLUTION"
	KindResponse   = "RESPONSE"
	KindEscalation = "ESCALATION"
)

// DefaultScanBatch bounds the reports one scan transaction makes; a scan with more due
// (the first after a long outage, say) commits a batch and goes on with the next.
const DefaultScanBatch = 1000

// scanLock is the transaction-level advisory lock every scan batch takes first, so two
// workers' scans run one after the other: the second sees the first's reports and makes
// none of them again. The unique key of sla_reports is what guarantees it; the lock
// spares the second scan the wait on every conflicting row and any lock-order surprise.
const scanLock int64 = 0x736c615f7363616e // "sla_scan"

// changeMargin is how far before the last scan's start an issue change (or a new
// policy, rule or desk) still sends its issues through the full check: longer than any
// transaction that changes an issue runs, so a change that committed after the last
// scan's snapshot but stamped its updated_at before that scan started is not missed.
const changeMargin = 10 * time.Minute

// scanSQL finds, in one statement, every SLA report that is due at ?0 and not yet made,
// records up to ?1 of them and returns those it really inserted, with what their
// notifications need. Elapsed time is measured against ?0, never the database clock, so
// tests set the time. Due means:
//   - RESOLUTION: the issue's timer started at least resolution_minutes before ?0 (whole
//     minutes elapsed reach the limit);
//   - ESCALATION: the same against each of the policy's rules' escalate_after_minutes;
//   - RESPONSE: the ticket was created at least response_minutes before ?0, no project
//     member commented before then and it is not done.
//
// Only enabled desks count, and an issue's policy is its desk's policy for its priority:
// an issue without either is skipped.
//
// The scan does not re-examine every running timer: sla_scan_state says where the last
// complete scan got to (scanned_to, its clock). A limit crossed at or before then was
// reported then, so only timers whose limit was crossed since are candidates: a range of
// the issues_sla_scope index per policy and rule. What that range cannot see comes in by
// its own index: issues changed since shortly before the last scan (a priority change, a
// timer started while a scan ran) through issues_project_updated, and every issue of a
// policy, rule or desk created or enabled since then. Candidates already reported are
// dropped by the unique key's index, and the insert's ON CONFLICT keeps a concurrent
// scan from reporting one twice. Every RESPONSE candidate leaves the open set
// (response_open) once its breach is recorded or it turns out answered in time, so the
// partial index keeps the ticket side small whatever the desk's history.
const scanSQL = `WITH policy AS (
	SELECT sp.id, sp.priority, sp.response_minutes, d.id AS desk_id, d.project_id,
		make_interval(mins => sp.resolution_minutes) AS resolution,
		CASE WHEN sp.created_at >= ?3::timestamptz OR d.updated_at >= ?3::timestamptz THEN '-infinity'::timestamptz
			ELSE ?2::timestamptz - make_interval(mins => sp.resolution_minutes) END AS since
	FROM sla_policies AS sp
	JOIN service_desks AS d ON d.id = sp.service_desk_id
	WHERE d.enabled AND NOT ` + timedWhere + `
), rule AS (
	SELECT r.id, sp.id AS policy_id, d.project_id, sp.priority,
		make_interval(mins => r.escalate_after_minutes) AS after,
		CASE WHEN sp.created_at >= ?3::timestamptz OR d.updated_at >= ?3::timestamptz OR r.created_at >= ?3::timestamptz
			THEN '-infinity'::timestamptz ELSE ?2::timestamptz - make_interval(mins => r.escalate_after_minutes) END AS since
	FROM escalation_rules AS r
	JOIN sla_policies AS sp ON sp.id = r.sla_policy_id
	JOIN service_desks AS d ON d.id = sp.service_desk_id
	WHERE d.enabled AND NOT ` + timedWhere + `
), response_due AS (
	SELECT t.issue_id, p.id AS policy_id,
		s.category <> 'DONE' AND NOT EXISTS (
			SELECT 1 FROM comments AS c
			JOIN projects AS pr ON pr.id = p.project_id
			WHERE c.issue_id = t.issue_id AND c.deleted_at IS NULL AND c.author_id IS NOT NULL
			  AND c.created_at < t.created_at + make_interval(mins => p.response_minutes)
			  AND (c.author_id = pr.owner_id
			    OR EXISTS (SELECT 1 FROM project_members AS pm WHERE pm.project_id = pr.id AND pm.user_id = c.author_id)
			    OR EXISTS (SELECT 1 FROM organization_members AS om WHERE om.org_id = pr.org_id AND om.user_id = c.author_id))
		) AS breached
	FROM service_desk_tickets AS t
	JOIN issues AS i ON i.id = t.issue_id
	JOIN policy AS p ON p.desk_id = t.service_desk_id AND p.priority = i.priority
	JOIN workflow_statuses AS s ON s.id = i.status_id
	WHERE t.response_open AND t.created_at <= ?0::timestamptz - make_interval(mins => p.response_minutes)
), changed AS MATERIALIZED (
	-- The issues of the desks' projects changed since shortly before the last scan, read
	-- once per project by project and updated_at alone (issues_project_updated; the
	-- OFFSET 0 keeps it a range per project) and compared with each policy and rule of
	-- the project afterwards. Read per policy and rule, every changed issue was read
	-- twelve times (four policies and eight rules a desk): 17,000 index rows a scan at
	-- 250,000 timers, where a scan's own escalations had changed 1,400 issues. Given the
	-- priority too, the planner read every issue of the priority through
	-- issues_project_priority and filtered on updated_at, some 300,000 rows a scan in
	-- the bench.
	SELECT i.id, i.project_id, i.priority, i.sla_start_time
	FROM (SELECT DISTINCT project_id FROM policy) AS p CROSS JOIN LATERAL (
		SELECT i.id, i.project_id, i.priority, i.sla_start_time FROM issues AS i
		WHERE i.project_id = p.project_id AND i.updated_at >= ?3::timestamptz AND i.sla_start_time IS NOT NULL
		OFFSET 0
	) AS i
), due AS (
	-- LATERAL with OFFSET 0, which keeps the planner from flattening it into a join: one
	-- range of issues_sla_scope per policy and rule, never a scan of every issue,
	-- whatever the planner guesses of the computed bounds.
	SELECT i.id AS issue_id, p.id AS policy_id, 'RESOLUTION' AS kind, NULL::uuid AS rule_id
	FROM policy AS p CROSS JOIN LATERAL (
		SELECT i.id FROM issues AS i
		WHERE i.project_id = p.project_id AND i.priority = p.priority
		  AND i.sla_start_time > p.since AND i.sla_start_time <= ?0::timestamptz - p.resolution
		OFFSET 0
	) AS i
	UNION
	SELECT c.id, p.id, 'RESOLUTION', NULL::uuid
	FROM policy AS p JOIN changed AS c ON c.project_id = p.project_id AND c.priority = p.priority
	WHERE c.sla_start_time <= ?0::timestamptz - p.resolution
	UNION
	SELECT i.id, r.policy_id, 'ESCALATION', r.id
	FROM rule AS r CROSS JOIN LATERAL (
		SELECT i.id FROM issues AS i
		WHERE i.project_id = r.project_id AND i.priority = r.priority
		  AND i.sla_start_time > r.since AND i.sla_start_time <= ?0::timestamptz - r.after
		OFFSET 0
	) AS i
	UNION
	SELECT c.id, r.policy_id, 'ESCALATION', r.id
	FROM rule AS r JOIN changed AS c ON c.project_id = r.project_id AND c.priority = r.priority
	WHERE c.sla_start_time <= ?0::timestamptz - r.after
	UNION
	SELECT rd.issue_id, rd.policy_id, 'RESPONSE', NULL::uuid FROM response_due AS rd WHERE rd.breached
), fresh AS (
	-- OFFSET 0 keeps the NOT EXISTS a probe of sla_reports_once per candidate: turned into
	-- an anti-join, the planner hashed every report ever written (185,000 in the bench,
	-- about 200 ms) to drop a few hundred candidates.
	SELECT due.* FROM due
	WHERE NOT EXISTS (SELECT 1 FROM sla_reports AS r
		WHERE r.issue_id = due.issue_id AND r.sla_policy_id = due.policy_id AND r.kind = due.kind
		  AND r.escalation_rule_id IS NOT DISTINCT FROM due.rule_id
		OFFSET 0)
	ORDER BY due.issue_id, due.policy_id, due.kind, due.rule_id
	LIMIT ?1
), ins AS (
	INSERT INTO sla_reports (issue_id, sla_policy_id, kind, escalation_rule_id, reported_at)
	SELECT issue_id, policy_id, kind, rule_id, ?0::timestamptz FROM fresh
	ON CONFLICT DO NOTHING
	RETURNING issue_id, sla_policy_id, kind, escalation_rule_id
), closed AS (
	UPDATE service_desk_tickets AS t SET response_open = false
	FROM response_due AS rd
	WHERE t.issue_id = rd.issue_id AND t.response_open
	  AND (NOT rd.breached
	    OR EXISTS (SELECT 1 FROM ins WHERE ins.issue_id = rd.issue_id AND ins.kind = 'RESPONSE')
	    OR EXISTS (SELECT 1 FROM sla_reports AS r
	      WHERE r.issue_id = rd.issue_id AND r.sla_policy_id = rd.policy_id AND r.kind = 'RESPONSE'))
)
` + reportsSelect

// reportsSelect is the final SELECT of scanSQL and clockScanSQL: the reports the
// statement inserted (ins) with what their notifications need.
const reportsSelect = `SELECT ins.issue_id, ins.sla_policy_id AS policy_id, ins.kind, ins.escalation_rule_id AS rule_id,
	i.key AS issue_key, i.title AS issue_title, i.project_id, pr.key AS project_key, sp.name AS policy_name,
	CASE ins.kind WHEN 'RESOLUTION' THEN sp.resolution_minutes WHEN 'RESPONSE' THEN sp.response_minutes
		ELSE er.escalate_after_minutes END AS minutes,
	er.assignee_id,
	CASE WHEN ins.kind = 'ESCALATION' THEN er.notify_user_ids
		ELSE ARRAY(SELECT DISTINCT u FROM escalation_rules AS r2, unnest(r2.notify_user_ids) AS u
			WHERE r2.sla_policy_id = ins.sla_policy_id) END AS recipients
FROM ins
JOIN issues AS i ON i.id = ins.issue_id
JOIN projects AS pr ON pr.id = i.project_id
JOIN sla_policies AS sp ON sp.id = ins.sla_policy_id
LEFT JOIN escalation_rules AS er ON er.id = ins.escalation_rule_id
ORDER BY minutes, ins.issue_id, ins.kind`

// clockClaimSQL takes up to ?1 clocks of timed policies (clocks.go) due at ?0 and not
// judged yet, read by the partial index sla_clocks_due, marks them done (by their row
// addresses: a TID scan, never a join with every clock; the scan lock keeps the rows
// where they are) and returns them.
const clockClaimSQL = `UPDATE sla_clocks AS c SET done = true
WHERE c.ctid = ANY (ARRAY(SELECT ctid FROM sla_clocks
	WHERE NOT done AND due_at IS NOT NULL AND due_at <= ?0::timestamptz
	ORDER BY due_at LIMIT ?1))
RETURNING c.issue_id, c.sla_policy_id, c.kind, coalesce(c.escalation_rule_id::text, '') AS rule_id, c.due_at`

// clockScanSQL judges the clocks clockClaimSQL took, given as arrays (?1 issues, ?2
// policies, ?3 kinds, ?4 rules (empty for none), ?5 due times; an array keeps every lookup an
// index probe per clock): a RESOLUTION or ESCALATION clock is reported at ?0, a
// RESPONSE clock only when the ticket is not done and no project member commented before
// it fell due (either way the ticket's response clock is closed). The insert's ON
// CONFLICT keeps a limit from being reported twice. A clock of a disabled desk is
// dropped without a report.
const clockScanSQL = `WITH due AS (
	SELECT d.issue_id, d.sla_policy_id, d.kind, nullif(d.rule_id, '')::uuid AS escalation_rule_id, d.due_at
	FROM unnest(?1::uuid[], ?2::uuid[], ?3::text[], ?4::text[], ?5::timestamptz[]) AS d (issue_id, sla_policy_id, kind, rule_id, due_at)
), judged AS (
	SELECT due.issue_id, due.sla_policy_id AS policy_id, due.kind, due.escalation_rule_id AS rule_id,
		d.enabled AND (due.kind <> 'RESPONSE' OR (s.category <> 'DONE' AND NOT EXISTS (
			SELECT 1 FROM comments AS c
			JOIN projects AS pr ON pr.id = i.project_id
			WHERE c.issue_id = due.issue_id AND c.deleted_at IS NULL AND c.author_id IS NOT NULL
			  AND c.created_at < due.due_at
			  AND (c.author_id = pr.owner_id
			    OR EXISTS (SELECT 1 FROM project_members AS pm WHERE pm.project_id = pr.id AND pm.user_id = c.author_id)
			    OR EXISTS (SELECT 1 FROM organization_members AS om WHERE om.org_id = pr.org_id AND om.user_id = c.author_id))
		))) AS breached
	FROM due
	JOIN issues AS i ON i.id = due.issue_id
	JOIN workflow_statuses AS s ON s.id = i.status_id
	JOIN sla_policies AS sp ON sp.id = due.sla_policy_id
	JOIN service_desks AS d ON d.id = sp.service_desk_id
), ins AS (
	INSERT INTO sla_reports (issue_id, sla_policy_id, kind, escalation_rule_id, reported_at)
	SELECT issue_id, policy_id, kind, rule_id, ?0::timestamptz FROM judged WHERE breached
	ON CONFLICT DO NOTHING
	RETURNING issue_id, sla_policy_id, kind, escalation_rule_id
), closed AS (
	UPDATE service_desk_tickets AS t SET response_open = false
	FROM due WHERE due.kind = 'RESPONSE' AND t.issue_id = due.issue_id AND t.response_open
)
` + reportsSelect

// claimedClock is a clock clockClaimSQL took.
type claimedClock struct {
	IssueID  uuid.UUID `bun:"issue_id"`
	PolicyID uuid.UUID `bun:"sla_policy_id"`
	Kind     string    `bun:"kind"`
	RuleID   string    `bun:"rule_id"`
	DueAt    time.Time `bun:"due_at"`
}

// clockArgs are clockScanSQL's arguments for the claimed clocks.
func clockArgs(now time.Time, cs []claimedClock) []any {
	issues, pols, kinds, rules, dues := make([]uuid.UUID, len(cs)), make([]uuid.UUID, len(cs)), make([]string, len(cs)),
		make([]string, len(cs)), make([]time.Time, len(cs))
	for i, c := range cs {
		issues[i], pols[i], kinds[i], rules[i], dues[i] = c.IssueID, c.PolicyID, c.Kind, c.RuleID, c.DueAt
	}
	return []any{now, pgdialect.Array(issues), pgdialect.Array(pols), pgdialect.Array(kinds), pgdialect.Array(rules),
		pgdialect.Array(dues)}
}

// clocksPendingSQL says whether a clock is still due at ?0 after a batch.
const clocksPendingSQL = `SELECT EXISTS (SELECT 1 FROM sla_clocks WHERE NOT done AND due_at IS NOT NULL AND due_at <= ?0::timestamptz)`

// scanState reads where the last complete scan got to: its clock (to) and the time
// from which changes count as new (since, changeMargin before it started). Before the
// first scan both are the Unix epoch, before anything Taskweave stores.
func scanState(ctx context.Context, tx bun.Tx) (to, since time.Time, err error) {
	var scannedTo, scannedAt *time.Time
	if err := tx.NewRaw("SELECT scanned_to, scanned_at FROM sla_scan_state").Scan(ctx, &scannedTo, &scannedAt); err != nil {
		return to, since, fmt.Errorf("sla scan state: %w", err)
	}
	to, since = time.Unix(0, 0).UTC(), time.Unix(0, 0).UTC()
	if scannedTo != nil {
		to = scannedTo.UTC()
	}
	if scannedAt != nil {
		since = scannedAt.UTC().Add(-changeMargin)
	}
	return to, since, nil
}

// advanceSQL moves the scan state once a scan has reported everything due at ?0: the
// clock never goes back (another worker's may be ahead), and the start time is this
// transaction's, which precedes the scan statement's snapshot.
const advanceSQL = `UPDATE sla_scan_state SET scanned_to = greatest(scanned_to, ?0::timestamptz), scanned_at = now()`

// report is one SLA report the scan made, with what its notifications need.
type report struct {
	IssueID    uuid.UUID   `bun:"issue_id"`
	PolicyID   uuid.UUID   `bun:"policy_id"`
	Kind       string      `bun:"kind"`
	RuleID     *uuid.UUID  `bun:"rule_id"`
	IssueKey   string      `bun:"issue_key"`
	IssueTitle string      `bun:"issue_title"`
	ProjectID  uuid.UUID   `bun:"project_id"`
	ProjectKey string      `bun:"project_key"`
	PolicyName string      `bun:"policy_name"`
	Minutes    int         `bun:"minutes"`
	AssigneeID *uuid.UUID  `bun:"assignee_id"`
	Recipients []uuid.UUID `bun:"recipients,array"`
}

func (r *report) subject() issue.Subject {
	return issue.Subject{ProjectID: r.ProjectID, ProjectKey: r.ProjectKey, IssueID: r.IssueID, IssueKey: r.IssueKey,
		Title: r.IssueTitle}
}

// ScanResult counts what one scan reported.
type ScanResult struct {
	Resolution  int
	Response    int
	Escalations int
	// Assigned counts escalations that gave the issue to the rule's assignee.
	Assigned int
}

// ScanTiming says where a scan's time went, summed over its batches (the bench prints it
// beside the reports): the statements finding and recording the reports, the
// escalations' assignments with their history entries, and building and inserting the
// reports' and the assignments' jobs.
type ScanTiming struct {
	Find, Assign, Jobs time.Duration
}

// Monitor is the SLA breach monitor: the worker runs Scan periodically
// (docs/operations.md#service-desk).
type Monitor struct {
	db      *bun.DB
	bus     *event.Bus
	audit   *audit.Recorder
	metrics *Metrics
	now     func() time.Time
	batch   int
}

// NewMonitor builds a monitor whose clock is now (time.Now when nil); m may be nil.
func NewMonitor(db *store.DB, bus *event.Bus, m *Metrics, now func() time.Time) *Monitor {
	if now == nil {
		now = time.Now
	}
	if m == nil {
		m = NewMetrics(nil)
	}
	return &Monitor{db: db.Bun, bus: bus, audit: audit.NewRecorder(bus), metrics: m, now: now, batch: DefaultScanBatch}
}

// WithBatch returns a monitor making at most n reports per transaction (tests, bench).
func (m *Monitor) WithBatch(n int) *Monitor {
	c := *m
	c.batch = max(1, n)
	return &c
}

// Scan reports every breach and escalation due now and not reported before: for each,
// in the transaction that records it, the notification jobs (SLA_BREACHED,
// SLA_RESPONSE_BREACHED, SLA_ESCALATED to the escalation rules' users), the audit job
// (by 'system') and, for an escalation with an assignee, the assignment with its issue
// events. Running it again, concurrently or after a crash, reports nothing twice.
func (m *Monitor) Scan(ctx context.Context) (ScanResult, error) {
	res, _, err := m.ScanTimed(ctx)
	return res, err
}

// ScanTimed is Scan saying where the time went.
func (m *Monitor) ScanTimed(ctx context.Context) (ScanResult, ScanTiming, error) {
	var timing ScanTiming
	start := time.Now()
	now := m.now().UTC()
	var total ScanResult
	add := func(res ScanResult) {
		total.Resolution += res.Resolution
		total.Response += res.Response
		total.Escalations += res.Escalations
		total.Assigned += res.Assigned
		m.metrics.Breaches.WithLabelValues(BreachResolution).Add(float64(res.Resolution))
		m.metrics.Breaches.WithLabelValues(BreachResponse).Add(float64(res.Response))
		m.metrics.Escalations.Add(float64(res.Escalations))
	}
	fail := func(err error) (ScanResult, ScanTiming, error) {
		m.metrics.observeScan(start, err)
		return total, timing, err
	}
	// The clocks of timed policies first, against the state the batches below advance.
	if err := m.syncClocks(ctx); err != nil {
		return fail(err)
	}
	for {
		res, n, err := m.scanBatch(ctx, now, &timing)
		if err != nil {
			return fail(err)
		}
		add(res)
		if n < m.batch {
			break
		}
	}
	for {
		res, more, err := m.clockBatch(ctx, now, &timing)
		if err != nil {
			return fail(err)
		}
		add(res)
		if !more {
			break
		}
	}
	m.metrics.observeScan(start, nil)
	return total, timing, nil
}

// syncClocks recomputes the clocks of timed policies that changed (clocks.go), under the
// scan lock.
func (m *Monitor) syncClocks(ctx context.Context) error {
	return store.InTx(ctx, m.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", scanLock); err != nil {
			return fmt.Errorf("sla scan lock: %w", err)
		}
		_, since, err := scanState(ctx, tx)
		if err != nil {
			return err
		}
		_, err = syncClocks(ctx, tx, since)
		return err
	})
}

// clockBatch judges one transaction's due clocks of timed policies; more says whether
// clocks due at now remain.
func (m *Monitor) clockBatch(ctx context.Context, now time.Time, t *ScanTiming) (ScanResult, bool, error) {
	var res ScanResult
	var more bool
	err := store.InTx(ctx, m.db, func(ctx context.Context, tx bun.Tx) error {
		res, more = ScanResult{}, false
		ctx = event.WithMemo(ctx)
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", scanLock); err != nil {
			return fmt.Errorf("sla scan lock: %w", err)
		}
		began := time.Now()
		var claimed []claimedClock
		if err := tx.NewRaw(clockClaimSQL, now, m.batch).Scan(ctx, &claimed); err != nil && !isNoRows(err) {
			return fmt.Errorf("sla clocks due: %w", err)
		}
		if len(claimed) == 0 {
			return nil
		}
		var reports []report
		if err := tx.NewRaw(clockScanSQL, clockArgs(now, claimed)...).Scan(ctx, &reports); err != nil && !isNoRows(err) {
			return fmt.Errorf("sla clock scan: %w", err)
		}
		t.Find += time.Since(began)
		if err := tx.NewRaw(clocksPendingSQL, now).Scan(ctx, &more); err != nil {
			return fmt.Errorf("sla clocks pending: %w", err)
		}
		return m.report(ctx, tx, now, reports, &res, t)
	})
	return res, more, err
}

// report makes the consequences of a batch's reports: notifications, audit, the
// escalations' assignments. Each kind is one statement for the whole batch: the reports'
// notification and audit jobs and the assignments' events' jobs go to River in one
// InsertManyFastTx (event.Bus.EmitWith), the assignments and their history in one
// statement (assignSQL).
func (m *Monitor) report(ctx context.Context, tx bun.Tx, now time.Time, reports []report, res *ScanResult, t *ScanTiming) error {
	if len(reports) == 0 {
		return nil
	}
	began := time.Now()
	ctx, events, err := m.assign(ctx, tx, now, reports)
	if err != nil {
		return err
	}
	res.Assigned = len(events)
	t.Assign += time.Since(began)
	began = time.Now()
	jobs, err := m.consequences(ctx, tx, reports, res)
	if err != nil {
		return err
	}
	if err := m.bus.EmitWith(ctx, tx, jobs, events...); err != nil {
		return err
	}
	t.Jobs += time.Since(began)
	return nil
}

// scanBatch makes one transaction's reports of policies without calendar or pauses; n
// is how many the statement inserted.
func (m *Monitor) scanBatch(ctx context.Context, now time.Time, t *ScanTiming) (ScanResult, int, error) {
	var res ScanResult
	var n int
	err := store.InTx(ctx, m.db, func(ctx context.Context, tx bun.Tx) error {
		res, n = ScanResult{}, 0
		// One memo for the batch: the audit toggles are read once, not per report.
		ctx = event.WithMemo(ctx)
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", scanLock); err != nil {
			return fmt.Errorf("sla scan lock: %w", err)
		}
		to, since, err := scanState(ctx, tx)
		if err != nil {
			return err
		}
		began := time.Now()
		var reports []report
		if err := tx.NewRaw(scanSQL, now, m.batch, to, since).Scan(ctx, &reports); err != nil && !isNoRows(err) {
			return fmt.Errorf("sla scan: %w", err)
		}
		t.Find += time.Since(began)
		n = len(reports)
		if n < m.batch {
			// Everything due now is reported (this batch holds the rest).
			if _, err := tx.NewRaw(advanceSQL, now).Exec(ctx); err != nil {
				return fmt.Errorf("sla scan state: %w", err)
			}
		}
		return m.report(ctx, tx, now, reports, &res, t)
	})
	return res, n, err
}

// consequences are the notification and audit jobs of the reports.
func (m *Monitor) consequences(ctx context.Context, tx bun.Tx, reports []report, res *ScanResult) ([]river.InsertManyParams, error) {
	var out []river.InsertManyParams
	for i := range reports {
		r := &reports[i]
		var typ, action string
		switch r.Kind {
		case KindResolution:
			typ, action = NotifySLABreached, AuditSLABreached
			res.Resolution++
		case KindResponse:
			typ, action = NotifySLAResponseBreached, AuditSLAResponseBreached
			res.Response++
		default:
			typ, action = NotifySLAEscalated, AuditSLAEscalated
			res.Escalations++
		}
		if len(r.Recipients) > 0 {
			out = append(out, river.InsertManyParams{Args: directNotification(typ, r.subject(), nil, r.Recipients,
				map[string]string{"policy": r.PolicyName, "minutes": strconv.Itoa(r.Minutes)})})
		}
		details, err := json.Marshal(map[string]any{"issueKey": r.IssueKey, "kind": r.Kind, "slaPolicyId": r.PolicyID,
			"policy": r.PolicyName, "minutes": r.Minutes, "escalationRuleId": r.RuleID})
		if err != nil {
			return nil, fmt.Errorf("audit details: %w", err)
		}
		projectID := r.ProjectID
		p, err := m.audit.Job(ctx, tx, audit.Entry{Action: action, UserEmail: "system", ProjectID: &projectID,
			ResourceType: "ISSUE", ResourceID: r.IssueID.String(), Details: string(details)})
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, *p)
		}
	}
	return out, nil
}

// assignSQL gives each issue of ?0 to the user of ?1 at the same index, where that is a
// change and the user can still see the project, writes each change's ASSIGNED history
// entry at ?3 by ?2 (the automation user), and returns the changes with the old and new
// assignee's names and, per change, ?4: the values the events' consumers read per
// project (event.Prefetch, with upd.project_id), so publishing them sends no statement
// per project. The issue rows are locked first, so the old assignee read is the one
// replaced. One statement for all of a batch's escalations, whatever their number
// (docs/performance.md#the-sla-scan-at-scale).
const assignSQL = `WITH a AS (
	SELECT * FROM unnest(?0::uuid[], ?1::uuid[]) AS a (issue_id, assignee_id)
), cur AS (
	SELECT i.id, i.assignee_id FROM issues AS i JOIN a ON a.issue_id = i.id ORDER BY i.id FOR UPDATE OF i
), upd AS (
	UPDATE issues AS i SET assignee_id = a.assignee_id, updated_at = clock_timestamp()
	FROM a, cur, projects AS p, users AS u
	WHERE i.id = a.issue_id AND cur.id = i.id AND p.id = i.project_id AND u.id = a.assignee_id
	  AND u.deleted_at IS NULL AND u.active AND cur.assignee_id IS DISTINCT FROM a.assignee_id
	  AND (p.owner_id = u.id
	    OR EXISTS (SELECT 1 FROM project_members AS pm WHERE pm.project_id = p.id AND pm.user_id = u.id)
	    OR EXISTS (SELECT 1 FROM organization_members AS om WHERE om.org_id = p.org_id AND om.user_id = u.id))
	RETURNING i.id AS issue_id, i.project_id, cur.assignee_id AS old_id,
		(SELECT display_name FROM users WHERE id = cur.assignee_id) AS old_name, u.display_name AS new_name
), act AS (
	INSERT INTO issue_activities (issue_id, actor_id, type, old_value, new_value, created_at)
	SELECT issue_id, ?2::uuid, '` + activityAssigned + `', old_name, new_name, ?3::timestamptz FROM upd
)
SELECT upd.issue_id, upd.project_id, upd.old_id, upd.old_name, upd.new_name, ARRAY[?4]::text[] AS prefetched FROM upd`

// activityAssigned is the issue activity type of an assignee change, as the issue
// service writes it.
const activityAssigned = "ASSIGNED"

// assign gives each escalated issue to its rule's assignee (of several rules reported
// together, the one with the longest delay wins), in one statement that also writes each
// issue's ASSIGNED history entry, by the built-in automation user
// (store.AutomationUserID, the actor of every change no person made), and returns the
// assignee changes as changes by the system (no actor), for one Emit: audit
// ISSUE_UPDATED by 'system', the ISSUE_ASSIGNED notification, the issue.assigned
// webhook, automation. ctx comes back with the consumers' per-project values read by
// the statement, for that Emit.
func (m *Monitor) assign(ctx context.Context, tx bun.Tx, now time.Time, reports []report) (context.Context, []event.Event, error) {
	// Reports come ordered by minutes, so the last rule of an issue has the longest delay.
	want := map[uuid.UUID]*report{}
	var order []uuid.UUID
	for i := range reports {
		r := &reports[i]
		if r.Kind != KindEscalation || r.AssigneeID == nil {
			continue
		}
		if _, ok := want[r.IssueID]; !ok {
			order = append(order, r.IssueID)
		}
		want[r.IssueID] = r
	}
	if len(order) == 0 {
		return ctx, nil, nil
	}
	assignees := make([]uuid.UUID, len(order))
	for i, id := range order {
		assignees[i] = *want[id].AssigneeID
	}
	prefetches := m.bus.Prefetches(issue.EventFieldChanged)
	cols := make([]string, len(prefetches))
	for i, pf := range prefetches {
		cols[i] = pf.SQL("upd.project_id")
	}
	var changed []struct {
		IssueID    uuid.UUID  `bun:"issue_id"`
		ProjectID  uuid.UUID  `bun:"project_id"`
		OldID      *uuid.UUID `bun:"old_id"`
		OldName    *string    `bun:"old_name"`
		NewName    string     `bun:"new_name"`
		Prefetched []string   `bun:"prefetched,array"`
	}
	err := tx.NewRaw(assignSQL, pgdialect.Array(order), pgdialect.Array(assignees), store.AutomationUserID, now,
		bun.Safe(strings.Join(cols, ", "))).Scan(ctx, &changed)
	if err != nil && !isNoRows(err) {
		return ctx, nil, fmt.Errorf("escalation assignment: %w", err)
	}
	events := make([]event.Event, len(changed))
	seen := map[uuid.UUID]bool{}
	for i, c := range changed {
		if !seen[c.ProjectID] && len(c.Prefetched) == len(prefetches) {
			seen[c.ProjectID] = true
			if ctx, err = event.WithPrefetched(ctx, c.ProjectID, prefetches, c.Prefetched); err != nil {
				return ctx, nil, err
			}
		}
		r := want[c.IssueID]
		events[i] = issue.FieldChanged{Subject: r.subject(), By: issue.By{Email: "system"}, Field: issue.FieldAssignee,
			OldValue: str(c.OldName), NewValue: c.NewName, OldRaw: idStr(c.OldID), NewRaw: r.AssigneeID.String(), At: now}
	}
	return ctx, events, nil
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func idStr(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}

// errRollback ends Explain's transaction without keeping anything.
var errRollback = errors.New("servicedesk: explain rolled back")

// Explain returns the plan of one scan batch at the monitor's clock (EXPLAIN, with
// ANALYZE the statement really runs): for the plan test and the bench. The transaction
// is rolled back, so nothing it would report is recorded.
func (m *Monitor) Explain(ctx context.Context, analyze bool) (string, error) {
	return m.explain(ctx, analyze, false)
}

// ExplainClocks is Explain of the statement judging the due clocks of timed policies
// (clockScanSQL).
func (m *Monitor) ExplainClocks(ctx context.Context, analyze bool) (string, error) {
	return m.explain(ctx, analyze, true)
}

func (m *Monitor) explain(ctx context.Context, analyze, clocks bool) (string, error) {
	opts := "(COSTS OFF)"
	if analyze {
		opts = "(ANALYZE, BUFFERS, COSTS OFF, TIMING OFF)"
	}
	var lines []string
	err := store.InTx(ctx, m.db, func(ctx context.Context, tx bun.Tx) error {
		var q *bun.RawQuery
		if clocks {
			// Both statements: the claim, then the judgement of what it took.
			var claim []string
			if err := tx.NewRaw("EXPLAIN "+opts+" "+clockClaimSQL, m.now().UTC(), m.batch).Scan(ctx, &claim); err != nil {
				return fmt.Errorf("explain sla clock claim: %w", err)
			}
			lines = append(lines, claim...)
			var claimed []claimedClock
			if err := tx.NewRaw(clockClaimSQL, m.now().UTC(), m.batch).Scan(ctx, &claimed); err != nil && !isNoRows(err) {
				return fmt.Errorf("sla clocks due: %w", err)
			}
			q = tx.NewRaw("EXPLAIN "+opts+" "+clockScanSQL, clockArgs(m.now().UTC(), claimed)...)
		} else {
			to, since, err := scanState(ctx, tx)
			if err != nil {
				return err
			}
			q = tx.NewRaw("EXPLAIN "+opts+" "+scanSQL, m.now().UTC(), m.batch, to, since)
		}
		var plan []string
		if err := q.Scan(ctx, &plan); err != nil {
			return fmt.Errorf("explain sla scan: %w", err)
		}
		lines = append(lines, plan...)
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		return "", err
	}
	return strings.Join(lines, "\n"), nil
}
