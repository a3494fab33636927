package servicedesk_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/pipeline"
	"github.com/taskweave/taskweave/domain/servicedesk"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// bundle is one project with a desk, its owner, a member, a viewer and an outsider, on
// a database of the test's own (audit WRITE switched on), and a clock the test moves.
type bundle struct {
	ctx                             context.Context
	db                              *store.DB
	bus                             *event.Bus
	desk                            *servicedesk.Service
	issues                          *issue.Service
	project                         servicedesk.Project
	owner, member, viewer, outsider issue.Actor
	todo, prog, done                uuid.UUID
	clock                           time.Time
	mu                              sync.Mutex
}

func newBundle(t *testing.T) *bundle {
	t.Helper()
	db := storetest.NewDB(t)
	ctx := context.Background()
	inserter, err := jobs.NewInserter(db.SQL, nil)
	require.NoError(t, err)
	b := &bundle{ctx: ctx, db: db, bus: pipeline.New(inserter, pipeline.Config{}).Bus}
	b.desk = servicedesk.NewService(db, b.bus, audit.NewRecorder(b.bus))
	b.issues = issue.NewService(db, b.bus)
	b.owner, b.member, b.viewer, b.outsider = b.user(t, "Owner"), b.user(t, "Member"), b.user(t, "Viewer"), b.user(t, "Outsider")
	b.owner.MemberRole, b.member.MemberRole = "ADMIN", "MEMBER"
	b.project, b.todo, b.prog, b.done = b.newProject(t, b.owner)
	b.exec(t, "INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, 'MEMBER'), ($1, $3, 'VIEWER')",
		b.project.ID, b.member.UserID, b.viewer.UserID)
	_, err = b.desk.Enable(ctx, b.owner.Actor, b.project, nil)
	require.NoError(t, err)
	b.exec(t, "UPDATE audit_config SET enabled = true WHERE level = 'WRITE'")
	return b
}

func (b *bundle) user(t *testing.T, name string) issue.Actor {
	t.Helper()
	a := issue.Actor{Actor: audit.Actor{UserID: uuid.New(), Email: strings.ToLower(name) + "-" + uuid.NewString()[:8] + "@example.com"},
		DisplayName: name}
	b.exec(t, "INSERT INTO users (id, email, display_name) VALUES ($1, $2, $3)", a.UserID, a.Email, a.DisplayName)
	return a
}

// newProject makes a project of owner with the default workflow.
func (b *bundle) newProject(t *testing.T, owner issue.Actor) (servicedesk.Project, uuid.UUID, uuid.UUID, uuid.UUID) {
	t.Helper()
	p := servicedesk.Project{ID: uuid.New(), Key: "S" + strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:7])}
	b.exec(t, "INSERT INTO projects (id, key, name, owner_id) VALUES ($1, $2, 'P', $3)", p.ID, p.Key, owner.UserID)
	wf, err := workflow.CreateDefault(b.ctx, b.db.Bun, p.ID)
	require.NoError(t, err)
	p.WorkflowID = &wf.ID
	var ids []uuid.UUID
	rows, err := b.db.Pool.Query(b.ctx, "SELECT id FROM workflow_statuses WHERE workflow_id = $1 ORDER BY position", wf.ID)
	require.NoError(t, err)
	for rows.Next() {
		var id uuid.UUID
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.Len(t, ids, 3)
	return p, ids[0], ids[1], ids[2]
}

func (b *bundle) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	_, err := b.db.Pool.Exec(b.ctx, q, args...)
	require.NoError(t, err)
}

func (b *bundle) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, q, args...).Scan(&n))
	return n
}

func (b *bundle) now() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.clock
}

func (b *bundle) set(at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clock = at
}

// monitor is a breach monitor on the bundle's clock.
func (b *bundle) monitor() *servicedesk.Monitor {
	return servicedesk.NewMonitor(b.db, b.bus, nil, b.now)
}

func (b *bundle) scanAt(t *testing.T, at time.Time) servicedesk.ScanResult {
	t.Helper()
	b.set(at)
	res, err := b.monitor().Scan(b.ctx)
	require.NoError(t, err)
	return res
}

func (b *bundle) policy(t *testing.T, priority string, response, resolution int) *servicedesk.Policy {
	t.Helper()
	p, err := b.desk.CreatePolicy(b.ctx, b.owner.Actor, b.project, servicedesk.NewPolicy{Name: priority + " SLA", Priority: priority,
		ResponseMinutes: response, ResolutionMinutes: resolution})
	require.NoError(t, err)
	return p
}

// start creates an issue of priority and moves it to IN_PROGRESS; it returns the issue
// and its timer's start.
func (b *bundle) start(t *testing.T, title, priority string) (*issue.View, time.Time) {
	t.Helper()
	v, err := b.issues.Create(b.ctx, b.issueProject(), b.owner, issue.NewIssue{Title: title, Type: issue.TypeTask, Priority: priority})
	require.NoError(t, err)
	v = b.move(t, v.ID, b.prog)
	require.NotNil(t, v.SLAStartTime)
	return v, *v.SLAStartTime
}

func (b *bundle) move(t *testing.T, id, status uuid.UUID) *issue.View {
	t.Helper()
	v, err := b.issues.Update(b.ctx, b.issueProject(), b.owner, issue.Ref{ID: id}, issue.Patch{StatusID: &status})
	require.NoError(t, err)
	return v
}

func (b *bundle) issueProject() issue.Project {
	return issue.Project{ID: b.project.ID, Key: b.project.Key, WorkflowID: b.project.WorkflowID}
}

// notifyJobs counts the direct notification jobs of type typ about issue id.
func (b *bundle) notifyJobs(t *testing.T, typ string, id uuid.UUID) int {
	t.Helper()
	return b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND args->>'event' = 'direct'
		AND args->>'type' = $1 AND args->>'issueId' = $2`, typ, id.String())
}

func (b *bundle) auditJobs(t *testing.T, action string, id uuid.UUID) int {
	t.Helper()
	return b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = $1
		AND args->>'resourceId' = $2 AND args->>'userEmail' = 'system' AND args->>'level' = 'WRITE'
		AND args->>'resourceType' = 'ISSUE'`, action, id.String())
}

func TestBreachAndEscalationReportedOnce(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	pol := b.policy(t, issue.PriorityHigh, 15, 60)
	_, err := b.desk.AddEscalationRule(b.ctx, b.owner.Actor, b.project, pol.ID, servicedesk.NewRule{EscalateAfterMinutes: 30,
		AssigneeID: &b.member.UserID, NotifyUserIDs: []uuid.UUID{b.viewer.UserID}})
	require.NoError(t, err)
	_, err = b.desk.AddEscalationRule(b.ctx, b.owner.Actor, b.project, pol.ID, servicedesk.NewRule{EscalateAfterMinutes: 90,
		NotifyUserIDs: []uuid.UUID{b.owner.UserID, b.viewer.UserID}})
	require.NoError(t, err)
	v, start := b.start(t, "Database slow", issue.PriorityHigh)

	// Nothing is due before 30 whole minutes.
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, start.Add(29*time.Minute+59*time.Second)))
	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM sla_reports"))

	// At 30 minutes the first rule escalates: reported once, the issue assigned to the
	// rule's assignee as a system change, its users notified.
	res := b.scanAt(t, start.Add(30*time.Minute))
	require.Equal(t, servicedesk.ScanResult{Escalations: 1, Assigned: 1}, res)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM issues WHERE id = $1 AND assignee_id = $2", v.ID, b.member.UserID))
	require.Equal(t, 1, b.notifyJobs(t, servicedesk.NotifySLAEscalated, v.ID))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND args->>'type' = 'SLA_ESCALATED'
		AND args->'recipients' = jsonb_build_array($1::text) AND args->'args'->>'minutes' = '30'`, b.viewer.UserID.String()))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND args->>'event' = 'assigned'
		AND args->>'assigneeId' = $1 AND args->>'issueId' = $2 AND NOT args ? 'actorId'`, b.member.UserID.String(), v.ID.String()))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'ISSUE_UPDATED'
		AND args->>'resourceId' = $1 AND args->>'userEmail' = 'system' AND args->>'details' LIKE '%"assignee"%'`, v.ID.String()))
	require.Equal(t, 1, b.auditJobs(t, servicedesk.AuditSLAEscalated, v.ID))
	// The issue's history says who took it, as the automation user.
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM issue_activities AS a JOIN users AS u ON u.id = a.actor_id
		WHERE a.issue_id = $1 AND a.type = 'ASSIGNED' AND a.old_value IS NULL AND a.new_value = $2
		AND u.id = '00000000-0000-4000-8000-00000000a070'`, v.ID, b.member.DisplayName))

	// Scanning again, at the same time or later, repeats nothing; the assignment is not
	// made again either (someone may have reassigned the issue since).
	b.exec(t, "UPDATE issues SET assignee_id = $2 WHERE id = $1", v.ID, b.owner.UserID)
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, start.Add(30*time.Minute)))
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, start.Add(59*time.Minute)))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM issues WHERE id = $1 AND assignee_id = $2", v.ID, b.owner.UserID))

	// At 60 minutes the resolution time is breached: SLA_BREACHED to every rule's users
	// (each once) and one audit row by 'system'.
	res = b.scanAt(t, start.Add(60*time.Minute))
	require.Equal(t, servicedesk.ScanResult{Resolution: 1}, res)
	require.Equal(t, 1, b.notifyJobs(t, servicedesk.NotifySLABreached, v.ID))
	var recipients []string
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, `SELECT array(SELECT jsonb_array_elements_text(args->'recipients') ORDER BY 1)
		FROM river_job WHERE args->>'type' = 'SLA_BREACHED'`).Scan(&recipients))
	want := []string{b.owner.UserID.String(), b.viewer.UserID.String()}
	if want[0] > want[1] {
		want[0], want[1] = want[1], want[0]
	}
	require.Equal(t, want, recipients)
	require.Equal(t, 1, b.auditJobs(t, servicedesk.AuditSLABreached, v.ID))

	// The second rule escalates at 90; after that nothing is left to report.
	require.Equal(t, servicedesk.ScanResult{Escalations: 1}, b.scanAt(t, start.Add(2*time.Hour)))
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, start.Add(48*time.Hour)))
	require.Equal(t, 1, b.auditJobs(t, servicedesk.AuditSLABreached, v.ID))
	require.Equal(t, 2, b.notifyJobs(t, servicedesk.NotifySLAEscalated, v.ID))
	require.Equal(t, 3, b.count(t, "SELECT count(*) FROM sla_reports WHERE issue_id = $1", v.ID))
}

func TestResponseClockStoppedByMemberComment(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	b.policy(t, issue.PriorityMedium, 15, 600)
	_, err := b.desk.AddEscalationRule(b.ctx, b.owner.Actor, b.project, b.mustPolicy(t, issue.PriorityMedium), servicedesk.NewRule{
		EscalateAfterMinutes: 500, NotifyUserIDs: []uuid.UUID{b.viewer.UserID}})
	require.NoError(t, err)
	submit := func(title string) (uuid.UUID, time.Time) {
		r, err := b.desk.Submit(b.ctx, b.project.Key, servicedesk.NewTicket{Title: title, Channel: servicedesk.ChannelWeb})
		require.NoError(t, err)
		var at time.Time
		require.NoError(t, b.db.Pool.QueryRow(b.ctx, "SELECT created_at FROM service_desk_tickets WHERE issue_id = $1", r.TicketID).Scan(&at))
		return r.TicketID, at
	}
	comment := func(id uuid.UUID, author *uuid.UUID) {
		b.exec(t, "INSERT INTO comments (issue_id, author_id, body) VALUES ($1, $2, 'On it')", id, author)
	}
	answered, created := submit("Answered by a member")
	comment(answered, &b.member.UserID)
	silent, _ := submit("Nobody answers")
	system, _ := submit("Only the system answers")
	comment(system, nil)
	stranger, _ := submit("Answered by an outsider")
	comment(stranger, &b.outsider.UserID)
	closed, _ := submit("Closed unanswered")
	b.move(t, closed, b.done)

	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, created.Add(14*time.Minute)))
	res := b.scanAt(t, created.Add(16*time.Minute))
	require.Equal(t, 3, res.Response, "silent, system and stranger breach; the answered and the closed ticket do not")
	for _, id := range []uuid.UUID{silent, system, stranger} {
		require.Equal(t, 1, b.notifyJobs(t, servicedesk.NotifySLAResponseBreached, id))
		require.Equal(t, 1, b.count(t, "SELECT count(*) FROM sla_reports WHERE issue_id = $1 AND kind = 'RESPONSE'", id))
	}
	for _, id := range []uuid.UUID{answered, closed} {
		require.Equal(t, 0, b.count(t, "SELECT count(*) FROM sla_reports WHERE issue_id = $1", id))
	}
	// Every ticket past its response time has left the monitor's open set.
	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM service_desk_tickets WHERE response_open"))
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, created.Add(5*time.Hour)))

	// A member's answer after the response time does not undo a breach, and a breached
	// ticket shows as breached in the list.
	comment(silent, &b.member.UserID)
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, created.Add(6*time.Hour)))
	items, err := b.desk.Tickets(b.ctx, b.project, 0, 50)
	require.NoError(t, err)
	breached := map[uuid.UUID]bool{}
	for _, it := range items {
		breached[it.ID] = it.Breached
	}
	require.Equal(t, map[uuid.UUID]bool{answered: false, silent: true, system: true, stranger: true, closed: false}, breached)
}

// mustPolicy is the id of the desk's policy for priority.
func (b *bundle) mustPolicy(t *testing.T, priority string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, "SELECT id FROM sla_policies WHERE priority = $1", priority).Scan(&id))
	return id
}

func TestTimerClearedByDoneAndRestartedByInProgress(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	b.policy(t, issue.PriorityHigh, 15, 60)
	v, start := b.start(t, "Flaky deploy", issue.PriorityHigh)

	done := b.move(t, v.ID, b.done)
	require.Nil(t, done.SLAStartTime, "DONE clears the timer")
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, start.Add(3*time.Hour)), "a done issue is skipped")

	// Reopened to TODO: still no timer, so still nothing to report.
	reopened := b.move(t, v.ID, b.todo)
	require.Nil(t, reopened.SLAStartTime)
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, start.Add(4*time.Hour)))

	// Its next move to IN_PROGRESS starts a new timer, and the breach is measured from it.
	again := b.move(t, v.ID, b.prog)
	require.NotNil(t, again.SLAStartTime)
	restart := *again.SLAStartTime
	require.True(t, restart.After(start))
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, restart.Add(59*time.Minute)))
	require.Equal(t, servicedesk.ScanResult{Resolution: 1}, b.scanAt(t, restart.Add(60*time.Minute)))

	// A second IN_PROGRESS status keeps the running timer.
	var second uuid.UUID
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, `INSERT INTO workflow_statuses (workflow_id, name, category, position)
		VALUES ($1, 'Review', 'IN_PROGRESS', 5) RETURNING id`, *b.project.WorkflowID).Scan(&second))
	moved := b.move(t, v.ID, second)
	require.Equal(t, restart.UnixMicro(), moved.SLAStartTime.UnixMicro())
}

func TestIssuesWithoutDeskOrPolicySkipped(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	b.policy(t, issue.PriorityHigh, 15, 60)
	covered, start := b.start(t, "Covered", issue.PriorityHigh)
	uncovered, _ := b.start(t, "No LOW policy", issue.PriorityLow)

	// A project without a desk, with a HIGH issue whose timer runs.
	other, _, otherProg, _ := b.newProject(t, b.owner)
	op := issue.Project{ID: other.ID, Key: other.Key, WorkflowID: other.WorkflowID}
	ov, err := b.issues.Create(b.ctx, op, b.owner, issue.NewIssue{Title: "No desk", Type: issue.TypeTask, Priority: issue.PriorityHigh})
	require.NoError(t, err)
	_, err = b.issues.Update(b.ctx, op, b.owner, issue.Ref{ID: ov.ID}, issue.Patch{StatusID: &otherProg})
	require.NoError(t, err)

	require.Equal(t, servicedesk.ScanResult{Resolution: 1}, b.scanAt(t, start.Add(24*time.Hour)))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM sla_reports WHERE issue_id = $1", covered.ID))
	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM sla_reports WHERE issue_id IN ($1, $2)", uncovered.ID, ov.ID))

	// A disabled desk is not monitored either.
	late, lateStart := b.start(t, "Desk off", issue.PriorityHigh)
	b.exec(t, "UPDATE service_desks SET enabled = false WHERE project_id = $1", b.project.ID)
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, lateStart.Add(24*time.Hour)))
	require.Equal(t, 0, b.count(t, "SELECT count(*) FROM sla_reports WHERE issue_id = $1", late.ID))
}

func TestConcurrentScansReportOnce(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	pol := b.policy(t, issue.PriorityHigh, 15, 60)
	_, err := b.desk.AddEscalationRule(b.ctx, b.owner.Actor, b.project, pol.ID, servicedesk.NewRule{EscalateAfterMinutes: 30,
		NotifyUserIDs: []uuid.UUID{b.viewer.UserID}})
	require.NoError(t, err)
	var start time.Time
	ids := make([]uuid.UUID, 7)
	for i := range ids {
		v, s := b.start(t, "Issue", issue.PriorityHigh)
		ids[i], start = v.ID, s
	}
	b.set(start.Add(2 * time.Hour))

	// Four monitors (as four workers would) scan at once, in batches of two.
	var wg sync.WaitGroup
	results := make([]servicedesk.ScanResult, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = b.monitor().WithBatch(2).Scan(b.ctx)
		}()
	}
	wg.Wait()
	var total servicedesk.ScanResult
	for i := range results {
		require.NoError(t, errs[i])
		total.Resolution += results[i].Resolution
		total.Escalations += results[i].Escalations
	}
	require.Equal(t, servicedesk.ScanResult{Resolution: 7, Escalations: 7}, total)
	require.Equal(t, 14, b.count(t, "SELECT count(*) FROM sla_reports"))
	require.Equal(t, 7, b.count(t, "SELECT count(*) FROM river_job WHERE args->>'type' = 'SLA_BREACHED'"))
	require.Equal(t, 7, b.count(t, "SELECT count(*) FROM river_job WHERE args->>'type' = 'SLA_ESCALATED'"))
	require.Equal(t, 7, b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'SLA_BREACHED'"))
}

// TestScanFollowsWhatChanged: after the first scan, a scan looks only at limits crossed
// since the last one, at issues changed since shortly before it, and at every issue of a
// policy, rule or desk created since; each of those paths is needed on its own.
func TestScanFollowsWhatChanged(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	b.policy(t, issue.PriorityHigh, 15, 60)
	// Desk and policy long established, so they alone send nothing through the full check.
	b.exec(t, "UPDATE service_desks SET created_at = now() - interval '1 day', updated_at = now() - interval '1 day'")
	b.exec(t, "UPDATE sla_policies SET created_at = now() - interval '1 day'")
	T := time.Now().UTC().Truncate(time.Second)
	// timed starts an issue whose timer started, and which last changed, at the given times.
	timed := func(title, priority string, started, changed time.Time) uuid.UUID {
		v, _ := b.start(t, title, priority)
		b.exec(t, "UPDATE issues SET sla_start_time = $2, updated_at = $3 WHERE id = $1", v.ID, started, changed)
		return v.ID
	}
	reported := func(id uuid.UUID) int {
		return b.count(t, "SELECT count(*) FROM sla_reports WHERE issue_id = $1", id)
	}

	// The first scan looks at everything.
	old := timed("Old breach", issue.PriorityHigh, T.Add(-5*time.Hour), T.Add(-5*time.Hour))
	require.Equal(t, servicedesk.ScanResult{Resolution: 1}, b.scanAt(t, T))
	require.Equal(t, 1, reported(old))

	// Frontier: a limit crossed since the last scan, on an issue unchanged for hours.
	frontier := timed("Crosses later", issue.PriorityHigh, T.Add(-30*time.Minute), T.Add(-2*time.Hour))
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, T.Add(29*time.Minute)))
	require.Equal(t, servicedesk.ScanResult{Resolution: 1}, b.scanAt(t, T.Add(30*time.Minute)))
	require.Equal(t, 1, reported(frontier))

	// Changed: a LOW issue (no policy) long past an hour becomes HIGH; its limit was
	// crossed long before the last scan, so only the change brings it in.
	low := timed("Was low", issue.PriorityLow, T.Add(-5*time.Hour), T.Add(-5*time.Hour))
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, T.Add(31*time.Minute)))
	high := issue.PriorityHigh
	_, err := b.issues.Update(b.ctx, b.issueProject(), b.owner, issue.Ref{ID: low}, issue.Patch{Priority: &high})
	require.NoError(t, err)
	require.Equal(t, servicedesk.ScanResult{Resolution: 1}, b.scanAt(t, T.Add(32*time.Minute)))
	require.Equal(t, 1, reported(low))

	// New policy: a MEDIUM issue unchanged for hours is checked in full once MEDIUM gets
	// a policy, and a new rule of an old policy escalates issues long past its delay.
	medium := timed("Medium", issue.PriorityMedium, T.Add(-5*time.Hour), T.Add(-5*time.Hour))
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, T.Add(33*time.Minute)))
	b.policy(t, issue.PriorityMedium, 15, 120)
	require.Equal(t, servicedesk.ScanResult{Resolution: 1}, b.scanAt(t, T.Add(34*time.Minute)))
	require.Equal(t, 1, reported(medium))
	_, err = b.desk.AddEscalationRule(b.ctx, b.owner.Actor, b.project, b.mustPolicy(t, issue.PriorityHigh),
		servicedesk.NewRule{EscalateAfterMinutes: 45, NotifyUserIDs: []uuid.UUID{b.viewer.UserID}})
	require.NoError(t, err)
	require.Equal(t, servicedesk.ScanResult{Escalations: 3}, b.scanAt(t, T.Add(35*time.Minute)), "old, frontier and low")

	// A worker whose clock is behind never moves the state back.
	var to time.Time
	b.scanAt(t, T)
	require.NoError(t, b.db.Pool.QueryRow(b.ctx, "SELECT scanned_to FROM sla_scan_state").Scan(&to))
	require.Equal(t, T.Add(35*time.Minute).UnixMicro(), to.UnixMicro())
}

// TestScanPlanUsesIndexes: the scan reads issues only by index ranges (issues_sla_scope
// for the limits crossed, issues_project_updated for recent changes), never by a scan of
// every issue, and the reports by their unique key. (The open tickets' partial index
// shows at the bench's scale; at this one a scan of the small table is as good.)
func TestScanPlanUsesIndexes(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	for _, p := range issue.Priorities {
		b.policy(t, p, 30, 240)
	}
	_, err := b.desk.AddEscalationRule(b.ctx, b.owner.Actor, b.project, b.mustPolicy(t, issue.PriorityHigh),
		servicedesk.NewRule{EscalateAfterMinutes: 60, NotifyUserIDs: []uuid.UUID{b.viewer.UserID}})
	require.NoError(t, err)
	// 10,000 issues with timers started over two days, a fifth of them tickets; a scan a
	// minute ago reported everything due then (the monitor's steady state).
	b.exec(t, `WITH ins AS (
		INSERT INTO issues (project_id, number, key, title, priority, status_id, reporter_id, sla_start_time, created_at, updated_at)
		SELECT $1, g, $2 || '-' || g, 'Timed ' || g, (ARRAY['CRITICAL','HIGH','MEDIUM','LOW'])[1 + g % 4], $3, $4,
			now() - make_interval(secs => (g * 7919) % 172800), now() - make_interval(secs => (g * 7919) % 172800 + 300),
			now() - interval '3 days'
		FROM generate_series(1000, 11000) AS g RETURNING id, number, created_at)
		INSERT INTO service_desk_tickets (issue_id, service_desk_id, channel, created_at)
		SELECT ins.id, d.id, 'WEB', ins.created_at FROM ins, service_desks AS d WHERE ins.number % 5 = 0`,
		b.project.ID, b.project.Key, b.prog, b.owner.UserID)
	b.exec(t, "UPDATE sla_policies SET created_at = now() - interval '3 days'")
	b.exec(t, "UPDATE escalation_rules SET created_at = now() - interval '3 days'")
	b.exec(t, "UPDATE service_desks SET created_at = now() - interval '3 days', updated_at = now() - interval '3 days'")
	res := b.scanAt(t, time.Now().Add(-time.Minute))
	require.Greater(t, res.Resolution, 1000)
	b.exec(t, "UPDATE sla_scan_state SET scanned_at = now() - interval '1 minute'")
	b.exec(t, "ANALYZE issues, service_desk_tickets, sla_reports, sla_policies, escalation_rules, service_desks")
	b.set(time.Now())
	before := b.count(t, "SELECT count(*) FROM sla_reports")

	plan, err := b.monitor().Explain(b.ctx, false)
	require.NoError(t, err)
	require.Contains(t, plan, "issues_sla_scope", plan)
	require.Contains(t, plan, "issues_project_updated", plan)
	require.Contains(t, plan, "sla_reports_once", plan)
	require.NotContains(t, plan, "Seq Scan on issues", plan)
	// Never the plain timer index: a range "started before now minus the limit" of it
	// holds most running timers.
	require.NotRegexp(t, `on issues_sla\b`, plan, plan)
	analyzed, err := b.monitor().Explain(b.ctx, true)
	require.NoError(t, err)
	require.Contains(t, analyzed, "actual rows=")
	require.Equal(t, before, b.count(t, "SELECT count(*) FROM sla_reports"), "EXPLAIN ANALYZE records nothing")
}

// TestEscalationsOfOneScanReportedTogether: a scan that finds many crossings at once
// reports each once with all its consequences, made for the whole batch together (one
// statement for the reports, one for the assignments with their history, one River
// insert for every job): the reports' notification and audit jobs, and for each
// assignment its history entry and the jobs its event gives every consumer (audit,
// the assignee's notification, the project's webhook, its automation rule), the
// consumers' per-project reads made by the assignment statement. A second scan adds
// nothing.
func TestEscalationsOfOneScanReportedTogether(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	pol := b.policy(t, issue.PriorityHigh, 15, 60)
	_, err := b.desk.AddEscalationRule(b.ctx, b.owner.Actor, b.project, pol.ID, servicedesk.NewRule{EscalateAfterMinutes: 30,
		AssigneeID: &b.member.UserID, NotifyUserIDs: []uuid.UUID{b.viewer.UserID}})
	require.NoError(t, err)
	b.exec(t, `INSERT INTO webhooks (project_id, url, secret, events, enabled)
		VALUES ($1, 'https://203.0.113.10/', 's', ARRAY['issue.assigned'], true)`, b.project.ID)
	b.exec(t, `INSERT INTO automation_rules (project_id, scope, name, trigger_type, created_by)
		VALUES ($1, 'PROJECT', 'On assignment', 'ASSIGNEE_CHANGED', $2)`, b.project.ID, b.owner.UserID)
	const n = 12
	var last time.Time
	ids := make([]uuid.UUID, n)
	for i := range ids {
		v, start := b.start(t, fmt.Sprintf("Issue %d", i), issue.PriorityHigh)
		ids[i], last = v.ID, start
	}
	jobsBefore := b.count(t, "SELECT count(*) FROM river_job")

	res := b.scanAt(t, last.Add(30*time.Minute))
	require.Equal(t, servicedesk.ScanResult{Escalations: n, Assigned: n}, res)
	require.Equal(t, n, b.count(t, "SELECT count(*) FROM sla_reports WHERE kind = 'ESCALATION'"))
	for _, id := range ids {
		require.Equal(t, 1, b.count(t, "SELECT count(*) FROM issues WHERE id = $1 AND assignee_id = $2", id, b.member.UserID))
		require.Equal(t, 1, b.notifyJobs(t, servicedesk.NotifySLAEscalated, id))
		require.Equal(t, 1, b.auditJobs(t, servicedesk.AuditSLAEscalated, id))
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'notify.event' AND args->>'event' = 'assigned'
			AND args->>'assigneeId' = $1 AND args->>'issueId' = $2`, b.member.UserID.String(), id.String()))
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'audit.record' AND args->>'action' = 'ISSUE_UPDATED'
			AND args->>'resourceId' = $1 AND args->>'userEmail' = 'system'`, id.String()))
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'automation.evaluate'
			AND args->>'trigger' = 'ASSIGNEE_CHANGED' AND args->>'issueId' = $1`, id.String()))
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM issue_activities WHERE issue_id = $1 AND type = 'ASSIGNED'
			AND old_value IS NULL AND new_value = $2 AND actor_id = '00000000-0000-4000-8000-00000000a070'`, id, b.member.DisplayName))
	}
	require.Equal(t, n, b.count(t, "SELECT count(*) FROM webhook_deliveries WHERE event_type = 'issue.assigned'"))
	require.Equal(t, n, b.count(t, `SELECT coalesce(sum(jsonb_array_length(args->'deliveryIds')), 0)::int FROM river_job
		WHERE kind = 'webhook.deliver'`), "every delivery sent by a job")
	jobsAfter := b.count(t, "SELECT count(*) FROM river_job")
	require.Equal(t, jobsBefore+5*n, jobsAfter-b.count(t, "SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver'"),
		"per escalation: SLA_ESCALATED, its audit, the assignment's notification, audit and automation")

	// Nothing twice.
	require.Equal(t, servicedesk.ScanResult{}, b.scanAt(t, last.Add(31*time.Minute)))
	require.Equal(t, n, b.count(t, "SELECT count(*) FROM sla_reports"))
	require.Equal(t, jobsAfter, b.count(t, "SELECT count(*) FROM river_job"))
	require.Equal(t, n, b.count(t, "SELECT count(*) FROM issue_activities WHERE type = 'ASSIGNED'"))
}
