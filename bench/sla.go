package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/servicedesk"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store"
)

// targetSLAScan is the breach monitor's budget per scan over 100,000 running timers.
const targetSLAScan = 200 * time.Millisecond

// slaOptions size the sla phase.
type slaOptions struct {
	issues   int
	projects int
	scans    int
	// calendars runs the scans again under business-hours calendars (runSLACalendars).
	calendars bool
	// window is how far back the timers started (slaWindow when 0): the crossings per
	// minute are issues / window.
	window time.Duration
}

// slaWindow is the sla phase's default spread of timer starts: 100,000 timers started
// over 48 hours cross 70 to 110 limits a minute.
const slaWindow = 48 * time.Hour

// slaResult is what the sla phase measured.
type slaResult struct {
	seeded   time.Duration
	history  int
	scans    []time.Duration
	reported []int
	// timings are the scans' own accounts of where their time went.
	timings []servicedesk.ScanTiming
	explain string
	// The same timers under business-hours calendars (runSLACalendars).
	calClocks   int
	calSync     time.Duration
	calAt       time.Time
	calScans    []time.Duration
	calReported []int
	calExplain  string
}

// runSLA measures the breach monitor's periodic scan. It bulk-inserts o.issues issues
// with running SLA timers (started over the last 48 hours, or o.window) in o.projects projects, each
// with an enabled desk, a policy per priority (resolution 4 h to 3 d) and two escalation
// rules per policy; a fifth of the issues are tickets. Everything due before the first
// scan is recorded as reported, as if the monitor had been running all along (its
// steady state), with the response clocks of those tickets settled. Then it runs
// o.scans scans, moving the monitor's clock a minute each time: every scan finds that
// minute's crossings among all running timers and reports them (notification and audit
// jobs included). It prints each scan's time and the EXPLAIN ANALYZE of one more.
func runSLA(ctx context.Context, db *store.DB, bus *event.Bus, s *seeded, o slaOptions) (slaResult, error) {
	var res slaResult
	start := time.Now()
	t0 := time.Now().UTC().Truncate(time.Second)
	perProject := o.issues / o.projects
	window := cmp.Or(o.window, slaWindow)
	for p := 0; p < o.projects; p++ {
		if err := seedSLAProject(ctx, db, s, p, perProject, t0, window); err != nil {
			return res, err
		}
	}
	// The history: what earlier scans reported up to a minute before t0.
	err := db.Pool.QueryRow(ctx, `WITH h AS (
		INSERT INTO sla_reports (issue_id, sla_policy_id, kind, escalation_rule_id, reported_at)
		SELECT i.id, sp.id, 'RESOLUTION', NULL::uuid, $1::timestamptz
		FROM sla_policies AS sp JOIN service_desks AS d ON d.id = sp.service_desk_id
		JOIN issues AS i ON i.project_id = d.project_id AND i.priority = sp.priority
		WHERE i.sla_start_time <= $1::timestamptz - interval '1 minute' - make_interval(mins => sp.resolution_minutes)
		UNION ALL
		SELECT i.id, sp.id, 'ESCALATION', r.id, $1
		FROM escalation_rules AS r JOIN sla_policies AS sp ON sp.id = r.sla_policy_id
		JOIN service_desks AS d ON d.id = sp.service_desk_id
		JOIN issues AS i ON i.project_id = d.project_id AND i.priority = sp.priority
		WHERE i.sla_start_time <= $1::timestamptz - interval '1 minute' - make_interval(mins => r.escalate_after_minutes)
		UNION ALL
		SELECT t.issue_id, sp.id, 'RESPONSE', NULL, $1
		FROM service_desk_tickets AS t JOIN issues AS i ON i.id = t.issue_id
		JOIN sla_policies AS sp ON sp.service_desk_id = t.service_desk_id AND sp.priority = i.priority
		WHERE t.created_at <= $1::timestamptz - interval '1 minute' - make_interval(mins => sp.response_minutes)
		RETURNING 1
	) SELECT count(*) FROM h`, t0).Scan(&res.history)
	if err != nil {
		return res, fmt.Errorf("seed sla history: %w", err)
	}
	_, err = db.Pool.Exec(ctx, `UPDATE service_desk_tickets AS t SET response_open = false
		FROM issues AS i, sla_policies AS sp
		WHERE i.id = t.issue_id AND sp.service_desk_id = t.service_desk_id AND sp.priority = i.priority
		  AND t.created_at <= $1::timestamptz - interval '1 minute' - make_interval(mins => sp.response_minutes)`, t0)
	if err != nil {
		return res, fmt.Errorf("settle seeded response clocks: %w", err)
	}
	// The last scan ran a minute ago.
	_, err = db.Pool.Exec(ctx, `UPDATE sla_scan_state SET scanned_to = $1::timestamptz - interval '1 minute',
		scanned_at = now() - interval '1 minute'`, t0)
	if err != nil {
		return res, fmt.Errorf("seed sla scan state: %w", err)
	}
	if _, err := db.Pool.Exec(ctx, "VACUUM ANALYZE issues, service_desk_tickets, sla_reports, sla_policies, escalation_rules, service_desks"); err != nil {
		return res, err
	}
	res.seeded = time.Since(start)

	var mu sync.Mutex
	clock := t0
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	mon := servicedesk.NewMonitor(db, bus, nil, now)
	for k := 0; k < o.scans; k++ {
		mu.Lock()
		clock = t0.Add(time.Duration(k) * time.Minute)
		mu.Unlock()
		began := time.Now()
		r, timing, err := mon.ScanTimed(ctx)
		if err != nil {
			return res, fmt.Errorf("scan %d: %w", k, err)
		}
		res.scans = append(res.scans, time.Since(began))
		res.reported = append(res.reported, r.Resolution+r.Response+r.Escalations)
		res.timings = append(res.timings, timing)
	}
	mu.Lock()
	clock = t0.Add(time.Duration(o.scans) * time.Minute)
	mu.Unlock()
	if res.explain, err = mon.Explain(ctx, true); err != nil {
		return res, err
	}
	if !o.calendars {
		return res, nil
	}
	return res, runSLACalendars(ctx, db, bus, o, t0, &res)
}

// runSLACalendars measures the same running timers once every policy counts in a
// business-hours calendar (Monday to Friday, 9:00-17:00 Europe/Berlin, Germany's
// holidays): the first scan after the change recomputes every clock (timed), then, as
// in the plain part, o.scans scans a minute apart judge the clocks falling due in that
// minute, starting at a working minute where clocks are due (everything due before it
// counted as judged, the monitor's steady state), with the recent changes' clocks
// recomputed by each scan as in production.
func runSLACalendars(ctx context.Context, db *store.DB, bus *event.Bus, o slaOptions, t0 time.Time, res *slaResult) error {
	_, err := db.Pool.Exec(ctx, `WITH c AS (
		INSERT INTO sla_calendars (service_desk_id, name, timezone, working_days, work_start, work_end, holidays_country)
		SELECT d.id, 'Office', 'Europe/Berlin', '{1,2,3,4,5}', 540, 1020, 'DE' FROM service_desks AS d
		WHERE EXISTS (SELECT 1 FROM sla_policies AS sp WHERE sp.service_desk_id = d.id)
		RETURNING id, service_desk_id
	) UPDATE sla_policies AS sp SET calendar_id = c.id, clocks_stale = true FROM c WHERE c.service_desk_id = sp.service_desk_id`)
	if err != nil {
		return fmt.Errorf("sla calendars: %w", err)
	}
	// The first scan recomputes every clock; on a clock before any timer started it
	// judges nothing, so this times the recomputation alone.
	var mu sync.Mutex
	clock := t0.Add(-72 * time.Hour)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	mon := servicedesk.NewMonitor(db, bus, nil, now)
	began := time.Now()
	if _, err := mon.Scan(ctx); err != nil {
		return fmt.Errorf("calendar clocks: %w", err)
	}
	res.calSync = time.Since(began)
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM sla_clocks").Scan(&res.calClocks); err != nil {
		return err
	}
	// A working minute with clocks due: the median due time of the clocks still to judge
	// that fall due inside working hours (10:00-16:00). A limit of whole working days
	// on a timer started outside working hours falls due exactly at a closing time, so
	// thousands fall due at 17:00 and none in the minutes after: a scan there measures
	// that crowd, not the steady state; so do round hours and half hours (a minute
	// ending in 3 is taken).
	if err := db.Pool.QueryRow(ctx, `SELECT date_trunc('minute', percentile_disc(0.5) WITHIN GROUP (ORDER BY due_at))
		FROM sla_clocks WHERE NOT done AND due_at IS NOT NULL
		  AND (due_at AT TIME ZONE 'Europe/Berlin')::time BETWEEN '10:00' AND '16:00'
		  AND date_part('minute', due_at)::int % 10 = 3`).Scan(&res.calAt); err != nil {
		return fmt.Errorf("calendar clock: %w", err)
	}
	if _, err := db.Pool.Exec(ctx, "UPDATE sla_clocks SET done = true WHERE due_at < $1", res.calAt); err != nil {
		return err
	}
	if _, err := db.Pool.Exec(ctx, "VACUUM ANALYZE sla_clocks, sla_calendars, sla_policies"); err != nil {
		return err
	}
	for k := 0; k < o.scans; k++ {
		mu.Lock()
		clock = res.calAt.Add(time.Duration(k) * time.Minute)
		mu.Unlock()
		began := time.Now()
		r, err := mon.Scan(ctx)
		if err != nil {
			return fmt.Errorf("calendar scan %d: %w", k, err)
		}
		res.calScans = append(res.calScans, time.Since(began))
		res.calReported = append(res.calReported, r.Resolution+r.Response+r.Escalations)
	}
	mu.Lock()
	clock = res.calAt.Add(time.Duration(o.scans) * time.Minute)
	mu.Unlock()
	res.calExplain, err = mon.ExplainClocks(ctx, true)
	return err
}

// seedSLAProject makes project p of the phase: desk, policies, rules and n issues in
// progress, their timers started over the window before t0; every fifth is a ticket
// created five minutes before its timer started.
func seedSLAProject(ctx context.Context, db *store.DB, s *seeded, p, n int, t0 time.Time, window time.Duration) error {
	projectID := uuid.New()
	key := fmt.Sprintf("SLA%d%s", p, strings.ToUpper(uuid.NewString()[:4]))
	if _, err := db.Pool.Exec(ctx, "INSERT INTO projects (id, key, name, owner_id) VALUES ($1, $2, 'SLA bench', $3)",
		projectID, key, s.userID); err != nil {
		return fmt.Errorf("sla project: %w", err)
	}
	wf, err := workflow.CreateDefault(ctx, db.Bun, projectID)
	if err != nil {
		return err
	}
	var deskID uuid.UUID
	// Desks, policies and rules a week old: set up long before the timers started.
	if err := db.Pool.QueryRow(ctx, `INSERT INTO service_desks (project_id, created_at, updated_at)
		VALUES ($1, $2::timestamptz - interval '7 days', $2::timestamptz - interval '7 days') RETURNING id`,
		projectID, t0).Scan(&deskID); err != nil {
		return fmt.Errorf("sla desk: %w", err)
	}
	_, err = db.Pool.Exec(ctx, `WITH p AS (
		INSERT INTO sla_policies (service_desk_id, name, priority, response_minutes, resolution_minutes, created_at)
		SELECT $1, v.name, v.priority, v.response, v.resolution, $3::timestamptz - interval '7 days'
		FROM (VALUES ('Critical', 'CRITICAL', 30, 240), ('High', 'HIGH', 60, 480), ('Medium', 'MEDIUM', 120, 1440),
			('Low', 'LOW', 240, 4320)) AS v (name, priority, response, resolution)
		RETURNING id, resolution_minutes
	)
	INSERT INTO escalation_rules (sla_policy_id, escalate_after_minutes, assignee_id, notify_user_ids, created_at)
	SELECT id, resolution_minutes / 2, $2::uuid, ARRAY[$2::uuid], $3::timestamptz - interval '7 days' FROM p
	UNION ALL
	SELECT id, resolution_minutes * 2, NULL, ARRAY[$2::uuid], $3::timestamptz - interval '7 days' FROM p`, deskID, s.userID, t0)
	if err != nil {
		return fmt.Errorf("sla policies: %w", err)
	}
	_, err = db.Pool.Exec(ctx, `WITH st AS (
		SELECT id FROM workflow_statuses WHERE workflow_id = $2 AND category = 'IN_PROGRESS' LIMIT 1
	), ins AS (
		INSERT INTO issues (project_id, number, key, title, type, priority, status_id, reporter_id, sla_start_time,
			created_at, updated_at)
		SELECT $1, g, $3 || '-' || g, 'Timed issue ' || g, 'TASK', (ARRAY['CRITICAL','HIGH','MEDIUM','LOW'])[1 + g % 4],
			st.id, $4, $5::timestamptz - make_interval(secs => (g::bigint * 7919) % $8::bigint),
			$5::timestamptz - make_interval(secs => (g::bigint * 7919) % $8::bigint + 300),
			$5::timestamptz - make_interval(secs => (g::bigint * 7919) % $8::bigint)
		FROM generate_series(1, $6::int) AS g, st
		RETURNING id, number, created_at
	)
	INSERT INTO service_desk_tickets (issue_id, service_desk_id, channel, created_at)
	SELECT id, $7, 'WEB', created_at FROM ins WHERE number % 5 = 0`,
		projectID, wf.ID, key, s.userID, t0, n, deskID, int64(window/time.Second))
	if err != nil {
		return fmt.Errorf("sla issues: %w", err)
	}
	_, err = db.Pool.Exec(ctx, "UPDATE projects SET issue_seq = $2 WHERE id = $1", projectID, n)
	return err
}

// printSLA reports the sla phase and its verdict.
func printSLA(o slaOptions, r slaResult) {
	fmt.Println()
	fmt.Printf("sla: %d issues with running timers in %d projects (a fifth tickets), seeded with %d earlier reports in %s\n",
		o.issues, o.projects, r.history, r.seeded.Round(time.Millisecond))
	for i, d := range r.scans {
		fmt.Printf("  scan %2d (clock +%d min): %7.1f ms, %d new reports (%s)\n", i+1, i, float64(d.Microseconds())/1000,
			r.reported[i], scanParts(r.timings[i]))
	}
	if len(r.scans) == 0 {
		return
	}
	fmt.Printf("  per report: %s\n", perReport(r.scans, r.reported, r.timings))
	sorted := slices.Clone(r.scans)
	slices.Sort(sorted)
	median, worst := sorted[len(sorted)/2], sorted[len(sorted)-1]
	fmt.Printf("  per scan: median %.1f ms, max %.1f ms (target ≤ %s): %s\n", float64(median.Microseconds())/1000,
		float64(worst.Microseconds())/1000, targetSLAScan, verdict(worst <= targetSLAScan))
	fmt.Println("  EXPLAIN (ANALYZE) of the scan statement (one more minute, rolled back):")
	for _, line := range strings.Split(r.explain, "\n") {
		fmt.Println("    " + line)
	}
	if len(r.calScans) == 0 {
		return
	}
	fmt.Printf("sla with calendars (Mon-Fri 9-17 Europe/Berlin, DE holidays): %d clocks recomputed in %s by the first scan\n",
		r.calClocks, r.calSync.Round(time.Millisecond))
	for i, d := range r.calScans {
		fmt.Printf("  scan %2d (clock %s): %7.1f ms, %d new reports\n", i+1, r.calAt.Add(time.Duration(i)*time.Minute).Format(time.RFC3339),
			float64(d.Microseconds())/1000, r.calReported[i])
	}
	sorted = slices.Clone(r.calScans)
	slices.Sort(sorted)
	cm, cw := sorted[len(sorted)/2], sorted[len(sorted)-1]
	fmt.Printf("  per scan with calendars: median %.1f ms, max %.1f ms (target ≤ %s): %s; plain: median %.1f ms, max %.1f ms\n",
		float64(cm.Microseconds())/1000, float64(cw.Microseconds())/1000, targetSLAScan, verdict(cw <= targetSLAScan),
		float64(median.Microseconds())/1000, float64(worst.Microseconds())/1000)
	fmt.Println("  EXPLAIN (ANALYZE) of the clock statements (one more minute, rolled back):")
	for _, line := range strings.Split(r.calExplain, "\n") {
		fmt.Println("    " + line)
	}
}

// ms prints a duration in milliseconds with one decimal.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// scanParts says where one scan's time went.
func scanParts(t servicedesk.ScanTiming) string {
	return fmt.Sprintf("find and record %s, assignments %s, jobs %s", ms(t.Find), ms(t.Assign), ms(t.Jobs))
}

// perReport is the scans' time per report: all of it divided by all their reports
// (the scan's fixed part counted in), and the part spent on the reports' jobs and
// assignments alone.
func perReport(scans []time.Duration, reported []int, timings []servicedesk.ScanTiming) string {
	var total, own time.Duration
	n := 0
	for i, d := range scans {
		total += d
		own += timings[i].Jobs + timings[i].Assign
		n += reported[i]
	}
	if n == 0 {
		return "no reports"
	}
	return fmt.Sprintf("%.2f ms (%s over %d reports), of which jobs and assignments %.2f ms", float64(total.Microseconds())/1000/float64(n),
		ms(total), n, float64(own.Microseconds())/1000/float64(n))
}
