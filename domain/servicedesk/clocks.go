package servicedesk

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// Policies with a business-hours calendar or pause statuses ("timed" policies) are not
// judged by scanSQL's elapsed-time ranges: their limits fall due at instants only Go
// computes (addBusiness). Their clocks are rows of sla_clocks holding the wall-clock
// due_at of each limit, and the scan (docs/operations.md#service-desk):
//
//  1. syncClocks: recomputes the clocks of every issue of a timed policy's project that
//     changed since shortly before the last scan (issues_project_updated: a status move
//     into or out of a pause status, a timer started or stopped, a priority change, a
//     new ticket), and every clock of a policy marked clocks_stale (new, its calendar or
//     rules changed);
//  2. clockScanSQL: judges the clocks due now through the partial index sla_clocks_due,
//     which holds only clocks not yet judged, so the statement reads what is due and
//     nothing else, however many clocks run.

// timedWhere selects timed policies (alias sp).
const timedWhere = "(sp.calendar_id IS NOT NULL OR cardinality(sp.pause_status_ids) > 0)"

// clockSyncChunk bounds the issues one recomputation query reads.
const clockSyncChunk = 2000

// timedPolicy is a timed policy with what computing its clocks needs.
type timedPolicy struct {
	ID                uuid.UUID          `bun:"id"`
	ProjectID         uuid.UUID          `bun:"project_id"`
	Priority          string             `bun:"priority"`
	ResponseMinutes   int                `bun:"response_minutes"`
	ResolutionMinutes int                `bun:"resolution_minutes"`
	CalendarID        *uuid.UUID         `bun:"calendar_id"`
	PauseStatusIDs    []uuid.UUID        `bun:"pause_status_ids,array"`
	Stale             bool               `bun:"clocks_stale"`
	rules             []timedRule        `bun:"-"`
	sched             *schedule          `bun:"-"`
	pause             map[uuid.UUID]bool `bun:"-"`
}

type timedRule struct {
	ID       uuid.UUID `bun:"id"`
	PolicyID uuid.UUID `bun:"sla_policy_id"`
	After    int       `bun:"escalate_after_minutes"`
}

// clockRow is one row of sla_clocks.
type clockRow struct {
	bun.BaseModel `bun:"table:sla_clocks"`

	IssueID  uuid.UUID  `bun:"issue_id,type:uuid"`
	PolicyID uuid.UUID  `bun:"sla_policy_id,type:uuid"`
	Kind     string     `bun:"kind"`
	RuleID   *uuid.UUID `bun:"escalation_rule_id,type:uuid"`
	DueAt    *time.Time `bun:"due_at"`
	Done     bool       `bun:"done"`
	// IssueUpdatedAt is the issue's updated_at the clock was computed from.
	IssueUpdatedAt time.Time `bun:"issue_updated_at"`
}

// clockIssue is what the clocks of one issue depend on.
type clockIssue struct {
	ID           uuid.UUID  `bun:"id"`
	ProjectID    uuid.UUID  `bun:"project_id"`
	Priority     string     `bun:"priority"`
	StatusID     uuid.UUID  `bun:"status_id"`
	SLAStartTime *time.Time `bun:"sla_start_time"`
	TicketAt     *time.Time `bun:"ticket_at"`
	ResponseOpen bool       `bun:"response_open"`
	UpdatedAt    time.Time  `bun:"updated_at"`
}

// statusMove is one STATUS_CHANGED entry of an issue's history.
type statusMove struct {
	IssueID  uuid.UUID `bun:"issue_id"`
	StatusID uuid.UUID `bun:"new_status_id"`
	At       time.Time `bun:"created_at"`
}

// loadTimedPolicies reads the timed policies of enabled desks (of the project when
// project is set) with their rules and calendars; nil when there are none (the common
// case: one query).
func loadTimedPolicies(ctx context.Context, tx bun.IDB, project *uuid.UUID) ([]*timedPolicy, error) {
	var pols []*timedPolicy
	err := tx.NewRaw(`SELECT sp.id, d.project_id, sp.priority, sp.response_minutes, sp.resolution_minutes,
			sp.calendar_id, sp.pause_status_ids, sp.clocks_stale
		FROM sla_policies AS sp JOIN service_desks AS d ON d.id = sp.service_desk_id
		WHERE d.enabled AND `+timedWhere+` AND (?::uuid IS NULL OR d.project_id = ?::uuid) ORDER BY sp.id`,
		project, project).Scan(ctx, &pols)
	if err != nil && !isNoRows(err) {
		return nil, fmt.Errorf("timed SLA policies: %w", err)
	}
	if len(pols) == 0 {
		return nil, nil
	}
	ids := make([]uuid.UUID, len(pols))
	byID := map[uuid.UUID]*timedPolicy{}
	var calIDs []uuid.UUID
	for i, p := range pols {
		ids[i], byID[p.ID] = p.ID, p
		p.pause = map[uuid.UUID]bool{}
		for _, s := range p.PauseStatusIDs {
			p.pause[s] = true
		}
		if p.CalendarID != nil {
			calIDs = append(calIDs, *p.CalendarID)
		}
	}
	var rules []timedRule
	if err := tx.NewRaw("SELECT id, sla_policy_id, escalate_after_minutes FROM escalation_rules WHERE sla_policy_id IN (?) ORDER BY id",
		bun.In(ids)).Scan(ctx, &rules); err != nil && !isNoRows(err) {
		return nil, fmt.Errorf("timed escalation rules: %w", err)
	}
	for _, r := range rules {
		byID[r.PolicyID].rules = append(byID[r.PolicyID].rules, r)
	}
	if len(calIDs) > 0 {
		var cals []store.SLACalendar
		if err := tx.NewSelect().Model(&cals).Where("sc.id IN (?)", bun.In(calIDs)).Scan(ctx); err != nil {
			return nil, fmt.Errorf("SLA calendars: %w", err)
		}
		scheds := map[uuid.UUID]*schedule{}
		for i := range cals {
			if scheds[cals[i].ID], err = newSchedule(&cals[i]); err != nil {
				return nil, err
			}
		}
		for _, p := range pols {
			if p.CalendarID != nil {
				p.sched = scheds[*p.CalendarID]
			}
		}
	}
	return pols, nil
}

// syncClocks brings sla_clocks up to date before the scan judges them: since is when
// changes count as new (scanState). It returns how many issues it recomputed.
func syncClocks(ctx context.Context, tx bun.Tx, since time.Time) (int, error) {
	pols, err := loadTimedPolicies(ctx, tx, nil)
	if err != nil || len(pols) == 0 {
		return 0, err
	}
	byScope := map[scope]*timedPolicy{}
	projects := map[uuid.UUID]bool{}
	var stale []uuid.UUID
	for _, p := range pols {
		byScope[scope{p.ProjectID, p.Priority}] = p
		projects[p.ProjectID] = true
		if p.Stale {
			stale = append(stale, p.ID)
		}
	}
	ids := map[uuid.UUID]bool{}
	for pid := range projects {
		var changed []uuid.UUID
		// Changed since, and not computed since that change: a change stays in the window
		// for the margin, some ten scans, but is computed once. (An issue with no clock
		// is looked at each time; that costs this query and one more.)
		if err := tx.NewRaw(`SELECT i.id FROM issues AS i WHERE i.project_id = ? AND i.updated_at >= ?
			AND NOT EXISTS (SELECT 1 FROM sla_clocks AS c WHERE c.issue_id = i.id AND c.issue_updated_at = i.updated_at)`,
			pid, since).Scan(ctx, &changed); err != nil && !isNoRows(err) {
			return 0, fmt.Errorf("changed issues: %w", err)
		}
		for _, id := range changed {
			ids[id] = true
		}
	}
	for _, p := range pols {
		if !p.Stale {
			continue
		}
		var all []uuid.UUID
		if err := tx.NewRaw(`SELECT i.id FROM issues AS i WHERE i.project_id = ? AND i.priority = ?
			AND (i.sla_start_time IS NOT NULL OR EXISTS (SELECT 1 FROM service_desk_tickets AS t WHERE t.issue_id = i.id AND t.response_open))`,
			p.ProjectID, p.Priority).Scan(ctx, &all); err != nil && !isNoRows(err) {
			return 0, fmt.Errorf("issues of a stale policy: %w", err)
		}
		for _, id := range all {
			ids[id] = true
		}
	}
	if len(stale) > 0 {
		// A stale policy's clocks of issues that left it go too.
		if _, err := tx.NewRaw("DELETE FROM sla_clocks WHERE sla_policy_id IN (?)", bun.In(stale)).Exec(ctx); err != nil {
			return 0, fmt.Errorf("drop stale clocks: %w", err)
		}
		if _, err := tx.NewRaw("UPDATE sla_policies SET clocks_stale = false WHERE id IN (?)", bun.In(stale)).Exec(ctx); err != nil {
			return 0, fmt.Errorf("clocks synced: %w", err)
		}
	}
	list := make([]uuid.UUID, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	slices.SortFunc(list, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	for chunk := range slices.Chunk(list, clockSyncChunk) {
		if err := recomputeClocks(ctx, tx, byScope, chunk); err != nil {
			return 0, err
		}
	}
	return len(list), nil
}

type scope struct {
	project  uuid.UUID
	priority string
}

// recomputeClocks replaces the clocks of the issues ids by those of their timed policy
// now, each due_at computed from the calendar and the issue's pauses; a clock whose
// limit was reported already is done.
func recomputeClocks(ctx context.Context, tx bun.Tx, byScope map[scope]*timedPolicy, ids []uuid.UUID) error {
	if _, err := tx.NewRaw("DELETE FROM sla_clocks WHERE issue_id IN (?)", bun.In(ids)).Exec(ctx); err != nil {
		return fmt.Errorf("drop clocks: %w", err)
	}
	var issues []clockIssue
	if err := tx.NewRaw(`SELECT i.id, i.project_id, i.priority, i.status_id, i.sla_start_time, i.updated_at,
			t.created_at AS ticket_at, coalesce(t.response_open, false) AS response_open
		FROM issues AS i LEFT JOIN service_desk_tickets AS t ON t.issue_id = i.id
		WHERE i.id IN (?)`, bun.In(ids)).Scan(ctx, &issues); err != nil && !isNoRows(err) {
		return fmt.Errorf("clock issues: %w", err)
	}
	var timed []uuid.UUID
	for _, is := range issues {
		if p := byScope[scope{is.ProjectID, is.Priority}]; p != nil && (is.SLAStartTime != nil || (is.TicketAt != nil && is.ResponseOpen)) {
			timed = append(timed, is.ID)
		}
	}
	if len(timed) == 0 {
		return nil
	}
	var moves []statusMove
	if err := tx.NewRaw(`SELECT issue_id, new_status_id, created_at FROM issue_activities
		WHERE issue_id IN (?) AND type = 'STATUS_CHANGED' AND new_status_id IS NOT NULL
		ORDER BY issue_id, created_at, id`, bun.In(timed)).Scan(ctx, &moves); err != nil && !isNoRows(err) {
		return fmt.Errorf("status history: %w", err)
	}
	history := map[uuid.UUID][]statusMove{}
	for _, m := range moves {
		history[m.IssueID] = append(history[m.IssueID], m)
	}
	var reported []clockRow
	if err := tx.NewRaw(`SELECT issue_id, sla_policy_id, kind, escalation_rule_id FROM sla_reports WHERE issue_id IN (?)`,
		bun.In(timed)).Scan(ctx, &reported); err != nil && !isNoRows(err) {
		return fmt.Errorf("reported limits: %w", err)
	}
	done := map[string]bool{}
	for _, r := range reported {
		done[clockKey(r.IssueID, r.PolicyID, r.Kind, r.RuleID)] = true
	}
	var rows []clockRow
	for _, is := range issues {
		p := byScope[scope{is.ProjectID, is.Priority}]
		if p == nil {
			continue
		}
		pauses := pausesOf(p, is.StatusID, history[is.ID])
		add := func(kind string, rule *uuid.UUID, from time.Time, minutes int) {
			r := clockRow{IssueID: is.ID, PolicyID: p.ID, Kind: kind, RuleID: rule,
				Done: done[clockKey(is.ID, p.ID, kind, rule)], IssueUpdatedAt: is.UpdatedAt}
			if at, ok := addBusiness(p.sched, from, minutes, pauses); ok {
				r.DueAt = &at
			}
			rows = append(rows, r)
		}
		if is.SLAStartTime != nil {
			add(KindResolution, nil, *is.SLAStartTime, p.ResolutionMinutes)
			for i := range p.rules {
				add(KindEscalation, &p.rules[i].ID, *is.SLAStartTime, p.rules[i].After)
			}
		}
		if is.TicketAt != nil && is.ResponseOpen {
			add(KindResponse, nil, *is.TicketAt, p.ResponseMinutes)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
		return fmt.Errorf("insert clocks: %w", err)
	}
	return nil
}

func clockKey(issue, policy uuid.UUID, kind string, rule *uuid.UUID) string {
	k := issue.String() + policy.String() + kind
	if rule != nil {
		k += rule.String()
	}
	return k
}

// pausesOf are the intervals the issue spent in a pause status of p, from its status
// history (oldest first) and its status now. Before its first recorded move an issue is
// taken to be in its workflow's initial status, never a pause status; an issue that never
// moved but sits in a pause status (a pause status was its initial one) is paused since
// ever. The last interval is open (zero to) while the issue is paused.
func pausesOf(p *timedPolicy, current uuid.UUID, moves []statusMove) []interval {
	if len(p.pause) == 0 {
		return nil
	}
	if len(moves) == 0 {
		if p.pause[current] {
			return []interval{{}}
		}
		return nil
	}
	var out []interval
	paused := false
	for _, m := range moves {
		switch in := p.pause[m.StatusID]; {
		case in && !paused:
			out, paused = append(out, interval{from: m.At}), true
		case !in && paused:
			out[len(out)-1].to, paused = m.At, false
		}
	}
	return out
}

// resolutionDue computes, as the scan would now, when the resolution limit of each of
// the project's issues ids under a timed policy falls due: nil while paused or without
// a running timer. For the ticket list, so its slaDueAt follows a pause at once rather
// than at the next scan.
func resolutionDue(ctx context.Context, db bun.IDB, project uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]*time.Time, error) {
	out := map[uuid.UUID]*time.Time{}
	if len(ids) == 0 {
		return out, nil
	}
	pols, err := loadTimedPolicies(ctx, db, &project)
	if err != nil || len(pols) == 0 {
		return out, err
	}
	byScope := map[scope]*timedPolicy{}
	for _, p := range pols {
		byScope[scope{p.ProjectID, p.Priority}] = p
	}
	var issues []clockIssue
	if err := db.NewRaw(`SELECT i.id, i.project_id, i.priority, i.status_id, i.sla_start_time, i.updated_at
		FROM issues AS i WHERE i.id IN (?) AND i.sla_start_time IS NOT NULL`, bun.In(ids)).Scan(ctx, &issues); err != nil && !isNoRows(err) {
		return nil, fmt.Errorf("due issues: %w", err)
	}
	if len(issues) == 0 {
		return out, nil
	}
	var moves []statusMove
	if err := db.NewRaw(`SELECT issue_id, new_status_id, created_at FROM issue_activities
		WHERE issue_id IN (?) AND type = 'STATUS_CHANGED' AND new_status_id IS NOT NULL
		ORDER BY issue_id, created_at, id`, bun.In(ids)).Scan(ctx, &moves); err != nil && !isNoRows(err) {
		return nil, fmt.Errorf("status history: %w", err)
	}
	history := map[uuid.UUID][]statusMove{}
	for _, m := range moves {
		history[m.IssueID] = append(history[m.IssueID], m)
	}
	for _, is := range issues {
		p := byScope[scope{is.ProjectID, is.Priority}]
		if p == nil {
			continue
		}
		if at, ok := addBusiness(p.sched, *is.SLAStartTime, p.ResolutionMinutes, pausesOf(p, is.StatusID, history[is.ID])); ok {
			out[is.ID] = &at
		} else {
			out[is.ID] = nil
		}
	}
	return out, nil
}
