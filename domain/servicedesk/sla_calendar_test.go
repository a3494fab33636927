package servicedesk_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/servicedesk"
)

func berlinAt(t *testing.T, s string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	at, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	require.NoError(t, err)
	return at.UTC()
}

// officeHours is a Monday-to-Friday 9:00-17:00 Berlin calendar with Germany's holidays.
func (b *bundle) officeHours(t *testing.T) uuid.UUID {
	t.Helper()
	de := "DE"
	c, err := b.desk.CreateCalendar(b.ctx, b.owner.Actor, b.project, servicedesk.NewCalendar{Name: "Office",
		Timezone: "Europe/Berlin", WorkingDays: []int16{1, 2, 3, 4, 5}, WorkStart: 9 * 60, WorkEnd: 17 * 60,
		HolidaysCountry: &de})
	require.NoError(t, err)
	return c.ID
}

// slaDueAt is the ticket list's slaDueAt of the ticket of issue id.
func (b *bundle) slaDueAt(t *testing.T, id uuid.UUID) *time.Time {
	t.Helper()
	items, err := b.desk.Tickets(b.ctx, b.project, 0, 100)
	require.NoError(t, err)
	for _, it := range items {
		if it.ID == id {
			return it.SLADueAt
		}
	}
	t.Fatalf("ticket %s not listed", id)
	return nil
}

// ticketAt makes a HIGH ticket whose issue is in progress, created and started at at.
func (b *bundle) ticketAt(t *testing.T, title string, at time.Time) uuid.UUID {
	t.Helper()
	high := issue.PriorityHigh
	r, err := b.desk.Submit(b.ctx, b.project.Key, servicedesk.NewTicket{Title: title, Channel: servicedesk.ChannelWeb})
	require.NoError(t, err)
	_, err = b.issues.Update(b.ctx, b.issueProject(), b.owner, issue.Ref{ID: r.TicketID}, issue.Patch{Priority: &high})
	require.NoError(t, err)
	b.move(t, r.TicketID, b.prog)
	b.exec(t, "UPDATE service_desk_tickets SET created_at = $2 WHERE issue_id = $1", r.TicketID, at)
	b.exec(t, "UPDATE issues SET sla_start_time = $2 WHERE id = $1", r.TicketID, at)
	b.exec(t, "UPDATE issue_activities SET created_at = $2 WHERE issue_id = $1", r.TicketID, at)
	return r.TicketID
}

// TestCalendarBusinessHours: a ticket of Friday 16:00 in Berlin under a policy counting
// Monday-to-Friday 9-17 with Germany's holidays: its first response (2 h) and resolution
// (4 h) fall due on Tuesday, Whit Monday being a holiday, and its escalation (1 h) at
// Friday's closing time, not at night; each is reported at that instant, not before.
// A calendar change moves the clocks.
func TestCalendarBusinessHours(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	cal := b.officeHours(t)
	pol, err := b.desk.CreatePolicy(b.ctx, b.owner.Actor, b.project, servicedesk.NewPolicy{Name: "Office", Priority: issue.PriorityHigh,
		ResponseMinutes: 120, ResolutionMinutes: 240, CalendarID: &cal})
	require.NoError(t, err)
	_, err = b.desk.AddEscalationRule(b.ctx, b.owner.Actor, b.project, pol.ID,
		servicedesk.NewRule{EscalateAfterMinutes: 60, NotifyUserIDs: []uuid.UUID{b.viewer.UserID}})
	require.NoError(t, err)
	id := b.ticketAt(t, "Printer on fire", berlinAt(t, "2026-05-22 16:00"))

	// The ticket list computes it at once, before any scan.
	require.Equal(t, berlinAt(t, "2026-05-26 12:00"), b.slaDueAt(t, id).UTC())
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, berlinAt(t, "2026-05-22 16:59")))
	require.Equal(t, berlinAt(t, "2026-05-26 12:00"), b.slaDueAt(t, id).UTC())
	require.Equal(t, servicedesk.ScanResult{Escalations: 1}, b.scanAt(t, berlinAt(t, "2026-05-22 17:00")))
	require.Equal(t, 1, b.notifyJobs(t, servicedesk.NotifySLAEscalated, id))
	// The weekend and the holiday pass without a breach.
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, berlinAt(t, "2026-05-26 09:59")))
	require.Equal(t, servicedesk.ScanResult{Response: 1}, b.scanAt(t, berlinAt(t, "2026-05-26 10:00")))
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, berlinAt(t, "2026-05-26 11:59")))
	require.Equal(t, servicedesk.ScanResult{Resolution: 1}, b.scanAt(t, berlinAt(t, "2026-05-26 12:00")))
	require.Equal(t, 1, b.notifyJobs(t, servicedesk.NotifySLABreached, id))
	require.Equal(t, 1, b.auditJobs(t, servicedesk.AuditSLABreached, id))
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, berlinAt(t, "2026-05-27 12:00")), "reported once")

	// Without the holidays, a second ticket of the same Friday falls due on Monday.
	other := b.ticketAt(t, "Second", berlinAt(t, "2026-05-22 16:00"))
	_, err = b.desk.UpdateCalendar(b.ctx, b.owner.Actor, b.project, cal, servicedesk.NewCalendar{Name: "Office",
		Timezone: "Europe/Berlin", WorkingDays: []int16{1, 2, 3, 4, 5}, WorkStart: 9 * 60, WorkEnd: 17 * 60})
	require.NoError(t, err)
	require.Equal(t, berlinAt(t, "2026-05-25 12:00"), b.slaDueAt(t, other).UTC(), "before the scan")
	require.Equal(t, servicedesk.ScanResult{Escalations: 1}, b.scanAt(t, berlinAt(t, "2026-05-25 09:59")))
	require.Equal(t, berlinAt(t, "2026-05-25 12:00"), b.slaDueAt(t, other).UTC())
	require.Equal(t, berlinAt(t, "2026-05-25 12:00"), b.slaDueAt(t, id).UTC(), "the first ticket's clock moved too")
	require.Equal(t, servicedesk.ScanResult{Response: 1}, b.scanAt(t, berlinAt(t, "2026-05-25 10:00")))
	require.Equal(t, servicedesk.ScanResult{Resolution: 1}, b.scanAt(t, berlinAt(t, "2026-05-25 12:00")))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM sla_reports WHERE issue_id = $1 AND kind = 'RESOLUTION'", id))

	// A calendar in use cannot go.
	require.ErrorIs(t, b.desk.DeleteCalendar(b.ctx, b.owner.Actor, b.project, cal), servicedesk.ErrCalendarInUse)
	require.NoError(t, b.desk.DeletePolicy(b.ctx, b.owner.Actor, b.project, pol.ID))
	require.NoError(t, b.desk.DeleteCalendar(b.ctx, b.owner.Actor, b.project, cal))
	for _, action := range []string{servicedesk.AuditCalendarCreated, servicedesk.AuditCalendarUpdated, servicedesk.AuditCalendarDeleted} {
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = $1
			AND args->>'resourceId' = $2 AND args->>'resourceType' = 'SLA_CALENDAR'`, action, cal.String()), action)
	}
}

// TestPauseStopsTheClock: two hours in "Waiting for customer" move the due time by two
// hours; no breach while an issue waits, however long; the clock runs on after.
func TestPauseStopsTheClock(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	var waiting uuid.UUID
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, `INSERT INTO workflow_statuses (workflow_id, name, category, position)
		VALUES ($1, 'Waiting for customer', 'IN_PROGRESS', 9) RETURNING id`, *b.project.WorkflowID).Scan(&waiting))
	_, err := b.desk.CreatePolicy(b.ctx, b.owner.Actor, b.project, servicedesk.NewPolicy{Name: "Pausing", Priority: issue.PriorityHigh,
		ResponseMinutes: 60, ResolutionMinutes: 240, PauseStatusIDs: []uuid.UUID{waiting}})
	require.NoError(t, err)
	S := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Minute)
	// history sets the issue's status moves (oldest first) to the given times.
	history := func(id uuid.UUID, at ...time.Time) {
		rows, err := b.db.Pool.Query(b.ctx, `SELECT id FROM issue_activities WHERE issue_id = $1 AND type = 'STATUS_CHANGED'
			ORDER BY created_at, id`, id)
		require.NoError(t, err)
		var ids []uuid.UUID
		for rows.Next() {
			var a uuid.UUID
			require.NoError(t, rows.Scan(&a))
			ids = append(ids, a)
		}
		require.Len(t, ids, len(at))
		for i, a := range ids {
			b.exec(t, "UPDATE issue_activities SET created_at = $2 WHERE id = $1", a, at[i])
		}
		b.exec(t, "UPDATE issues SET sla_start_time = $2 WHERE id = $1", id, at[0])
	}

	resumed, _ := b.start(t, "Resumed", issue.PriorityHigh)
	b.move(t, resumed.ID, waiting)
	b.move(t, resumed.ID, b.prog)
	history(resumed.ID, S, S.Add(time.Hour), S.Add(3*time.Hour))

	waits, _ := b.start(t, "Still waiting", issue.PriorityHigh)
	b.move(t, waits.ID, waiting)
	history(waits.ID, S, S.Add(time.Hour))

	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, S.Add(6*time.Hour-time.Minute)))
	var due *time.Time
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, "SELECT due_at FROM sla_clocks WHERE issue_id = $1 AND kind = 'RESOLUTION'", resumed.ID).Scan(&due))
	require.Equal(t, S.Add(6*time.Hour), due.UTC(), "4 h plus the 2 h pause")
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, "SELECT due_at FROM sla_clocks WHERE issue_id = $1 AND kind = 'RESOLUTION'", waits.ID).Scan(&due))
	require.Nil(t, due, "no due time while paused")
	require.Equal(t, servicedesk.ScanResult{Resolution: 1}, b.scanAt(t, S.Add(6*time.Hour)))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM sla_reports WHERE issue_id = $1", resumed.ID))
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, S.Add(20*time.Hour)), "the waiting issue never breaches")
	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM sla_reports WHERE issue_id = $1", waits.ID))

	// Back to work (now, some 23 hours after the pause began): 3 hours are left.
	b.move(t, waits.ID, b.prog)
	back := time.Now().UTC()
	b.scanAt(t, back)
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, "SELECT due_at FROM sla_clocks WHERE issue_id = $1 AND kind = 'RESOLUTION'", waits.ID).Scan(&due))
	require.NotNil(t, due)
	require.WithinDuration(t, back.Add(3*time.Hour), *due, 5*time.Second)
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, due.Add(-time.Minute)))
	require.Equal(t, servicedesk.ScanResult{Resolution: 1}, b.scanAt(t, due.Add(time.Second)))

	// The ticket list follows a pause at once: no slaDueAt while waiting, a later one after.
	tk := b.ticketAt(t, "Ticket", time.Now().UTC().Add(-time.Hour))
	first := b.slaDueAt(t, tk)
	require.NotNil(t, first)
	b.move(t, tk, waiting)
	require.Nil(t, b.slaDueAt(t, tk))
	b.move(t, tk, b.prog)
	again := b.slaDueAt(t, tk)
	require.NotNil(t, again)
	require.True(t, again.After(*first), "%s after %s", again, first)

	// An issue that leaves the policy (another priority, no policy) loses its clocks.
	moved, _ := b.start(t, "Moved", issue.PriorityHigh)
	b.scanAt(t, time.Now())
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM sla_clocks WHERE issue_id = $1", moved.ID))
	low := issue.PriorityLow
	_, err = b.issues.Update(b.ctx, b.issueProject(), b.owner, issue.Ref{ID: moved.ID}, issue.Patch{Priority: &low})
	require.NoError(t, err)
	b.scanAt(t, time.Now())
	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM sla_clocks WHERE issue_id = $1", moved.ID))
}

// TestClockScanPlanUsesIndex: the clocks of timed policies are judged through the
// partial index of due clocks not yet judged, never by reading every clock.
func TestClockScanPlanUsesIndex(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	cal := b.officeHours(t)
	pol, err := b.desk.CreatePolicy(b.ctx, b.owner.Actor, b.project, servicedesk.NewPolicy{Name: "Office", Priority: issue.PriorityHigh,
		ResponseMinutes: 120, ResolutionMinutes: 240, CalendarID: &cal})
	require.NoError(t, err)
	b.exec(t, `WITH ins AS (
		INSERT INTO issues (project_id, number, key, title, priority, status_id, reporter_id, sla_start_time)
		SELECT $1, g, $2 || '-' || g, 'Timed ' || g, 'HIGH', $3, $4, now() - make_interval(secs => g * 17)
		FROM generate_series(1000, 11000) AS g RETURNING id, number)
		INSERT INTO sla_clocks (issue_id, sla_policy_id, kind, issue_updated_at, due_at)
		SELECT ins.id, $5, 'RESOLUTION', now(), now() + make_interval(secs => (ins.number * 7919) % 172800) - interval '1 day'
		FROM ins`, b.project.ID, b.project.Key, b.prog, b.owner.UserID, pol.ID)
	// The steady state: a scan a minute ago judged everything due then.
	b.exec(t, "UPDATE sla_clocks SET done = true WHERE due_at < now() - interval '1 minute'")
	b.exec(t, "UPDATE sla_policies SET clocks_stale = false")
	b.exec(t, "ANALYZE sla_clocks, issues")
	b.set(time.Now())
	plan, err := b.monitor().ExplainClocks(b.ctx, false)
	require.NoError(t, err)
	require.Contains(t, plan, "sla_clocks_due", plan)
	require.NotContains(t, plan, "Seq Scan on sla_clocks", plan)
	require.NotContains(t, plan, "Seq Scan on issues", plan)
}
