package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// Automation targets on the reference machine (2 cores, two worker processes).
const (
	targetAutomationEventsPerSecond = 500
	targetAutomationP99             = 500 * time.Millisecond
)

// automationOptions shape the automation phase.
type automationOptions struct {
	rules   int // enabled rules in the seeded project
	events  int // issue events emitted and measured
	warmup  int // events emitted and worked first, not measured
	rate    int // offered events per second; 0 = as fast as the emitters go
	batch   int // events per emitting transaction
	workers int // worker processes
}

// automationResult is what the automation phase measured.
type automationResult struct {
	events     int
	elapsed    time.Duration // first event to the last evaluation job finished
	emitted    time.Duration
	jobs       int            // evaluation jobs run, the emitted events' and the chains' their actions started
	executions map[string]int // by status
	acted      int            // executions that ran actions (SUCCESS or FAILED)
	chained    int            // executions of changes the rules' actions made (chain depth > 0)
	latencies  []time.Duration
	cpu        cpuTimes
	// own is the CPU the pipeline's own processes spent (pipelinePIDs); cpu, the whole
	// machine's, also counts whatever else runs on it. bench, workers and postgres
	// split own by process: this one (the emitters and their bus consumers), the
	// worker processes, and the Postgres backends of the bench database.
	own, bench, workers, postgres time.Duration
}

func (r automationResult) perSecond() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.events) / r.elapsed.Seconds()
}

func (r automationResult) pct(p float64) time.Duration {
	return result{latencies: r.latencies}.pct(p)
}

// The bench's rule mix: every trigger in turn, each rule with a three-level tree (AND:
// the issue type, then OR: a story-point value, or AND: priority, assignee and few
// story points) and one or two actions. The operands are drawn so that about one in
// eighty evaluations acts, a few tenths of a rule per event, as in a project whose rules
// each handle a narrow case; the output says how many acted.
var (
	benchTriggers = []string{"ISSUE_CREATED", "STATUS_CHANGED", "PRIORITY_CHANGED", "ASSIGNEE_CHANGED", "COMMENT_ADDED",
		"SPRINT_STARTED", "SPRINT_COMPLETED"}
	benchTypes      = []string{"EPIC", "STORY", "BUG", "TASK"}
	benchPriorities = []string{"CRITICAL", "HIGH", "MEDIUM", "LOW"}
)

// benchRule is the i-th rule of the mix.
func benchRule(i int, rng *rand.Rand, s *seeded) map[string]any {
	cond := func(typ, op, value string) map[string]any {
		return map[string]any{"type": typ, "operator": op, "params": map[string]any{"value": value}}
	}
	trigger := benchTriggers[i%len(benchTriggers)]
	var payload any
	switch trigger {
	case "STATUS_CHANGED":
		payload = map[string]any{"toStatusId": s.statusID.String()}
	case "PRIORITY_CHANGED":
		payload = map[string]any{"priority": benchPriorities[rng.IntN(len(benchPriorities))]}
	}
	assignee := cond("ASSIGNEE", "IS", "")
	if rng.IntN(2) == 0 {
		assignee = cond("ASSIGNEE", "IS", s.userID.String())
	}
	inner := map[string]any{"logic": "AND", "conditions": []any{
		cond("PRIORITY", "IS", benchPriorities[rng.IntN(len(benchPriorities))]), assignee, cond("STORY_POINTS", "LT", "3"),
	}}
	child := map[string]any{"logic": "OR", "conditions": []any{cond("STORY_POINTS", "IS", fmt.Sprint(rng.IntN(13)))},
		"childGroups": []any{inner}}
	actions := []any{}
	switch rng.IntN(4) {
	case 0:
		actions = append(actions, map[string]any{"type": "CREATE_COMMENT", "params": map[string]any{"body": fmt.Sprintf("Rule %d was here", i)}})
	case 1:
		actions = append(actions, map[string]any{"type": "SEND_NOTIFICATION", "params": map[string]any{"message": fmt.Sprintf("Rule %d fired", i)}})
	case 2:
		actions = append(actions, map[string]any{"type": "SET_PRIORITY", "params": map[string]any{"priority": benchPriorities[rng.IntN(len(benchPriorities))]}})
	case 3:
		actions = append(actions, map[string]any{"type": "SET_ASSIGNEE", "params": map[string]any{"assigneeId": s.userID.String()}},
			map[string]any{"type": "CREATE_COMMENT", "params": map[string]any{"body": "Assigned by a rule"}})
	}
	return map[string]any{"name": fmt.Sprintf("Bench rule %d", i), "triggerType": trigger, "triggerPayload": payload,
		"rootGroupLogic": "AND", "conditions": []any{cond("ISSUE_TYPE", "IS", benchTypes[rng.IntN(len(benchTypes))])},
		"childGroups": []any{child}, "actions": actions}
}

// benchIssue is a seeded issue as the events name it.
type benchIssue struct {
	id         uuid.UUID
	key, title string
}

// automationIssues reads n of the seeded issues, spread over the project.
func automationIssues(ctx context.Context, db *store.DB, s *seeded, n int) ([]benchIssue, error) {
	rows, err := db.Pool.Query(ctx, `SELECT id, key, title FROM issues WHERE project_id = $1 AND parent_id IS NULL
		ORDER BY number LIMIT $2`, s.projectID, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []benchIssue
	for rows.Next() {
		var b benchIssue
		if err := rows.Scan(&b.id, &b.key, &b.title); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// benchEvent is the i-th issue event of the run: created, moved to the first status,
// priority or assignee changed, or commented, in turn, on issue iss. The change itself is
// not made (as in the deliver phase, the API's own cost is measured elsewhere): the
// events go through the server's bus exactly as a request's do, and the rules read
// the issue as it is.
func benchEvent(i int, iss benchIssue, s *seeded) event.Event {
	actor := s.userID
	subj := issue.Subject{ProjectID: s.projectID, ProjectKey: s.key, IssueID: iss.id, IssueKey: iss.key, Title: iss.title}
	by := issue.By{ID: &actor, Email: s.email}
	now := time.Now().UTC()
	switch i % 5 {
	case 0:
		return issue.Created{Subject: subj, By: by, Type: "TASK", Priority: "MEDIUM", StatusID: s.statusID, ReporterID: actor, At: now}
	case 1:
		return issue.StatusChanged{Subject: subj, By: by, OldStatusID: s.statusID, NewStatusID: s.statusID,
			OldStatusName: "To Do", NewStatusName: "To Do", OldStatusCategory: "TODO", NewStatusCategory: "TODO", At: now}
	case 2:
		p := benchPriorities[i%len(benchPriorities)]
		return issue.FieldChanged{Subject: subj, By: by, Field: issue.FieldPriority, OldValue: "MEDIUM", NewValue: p,
			OldRaw: "MEDIUM", NewRaw: p, At: now}
	case 3:
		return issue.FieldChanged{Subject: subj, By: by, Field: issue.FieldAssignee, NewValue: "Bench", NewRaw: actor.String(), At: now}
	default:
		return comment.Created{Subject: subj, By: by, CommentID: uuid.New(), Body: "A comment", At: now}
	}
}

// emitConns is the pool size and the number of goroutines the events are emitted with.
const emitConns = 16

// emitAutomationEvents emits events for issues on the server's bus, batch events per
// transaction (as a request that changes several issues, and as the deliver phase
// does), paced to rate, from emitConns goroutines: one event per transaction capped
// the generator near 200-450 events/s on this machine, under the 500/s the pipeline is
// to be measured at.
func emitAutomationEvents(ctx context.Context, db *store.DB, bus *event.Bus, s *seeded, issues []benchIssue, from, n, rate, batch int) error {
	batch = max(batch, 1)
	batches := (n + batch - 1) / batch
	return paced(batches, batch, rate, emitConns, func(b int) error {
		first := from + b*batch
		evs := make([]event.Event, 0, batch)
		for i := first; i < min(first+batch, from+n); i++ {
			evs = append(evs, benchEvent(i, issues[i%len(issues)], s))
		}
		return store.InTx(ctx, db.Bun, func(ctx context.Context, tx bun.Tx) error {
			return bus.Emit(ctx, tx, evs...)
		})
	})
}

// awaitAutomation waits until no evaluation job is left to run (the chains the
// actions start included).
func awaitAutomation(ctx context.Context, db *store.DB, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		var open, failed int
		err := db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state NOT IN ('completed', 'discarded', 'cancelled')),
				count(*) FILTER (WHERE errors IS NOT NULL)
			FROM river_job WHERE kind = 'automation.evaluate'`).Scan(&open, &failed)
		if err != nil {
			return err
		}
		if failed > 0 {
			var msg string
			_ = db.Pool.QueryRow(ctx, `SELECT errors::text FROM river_job WHERE kind = 'automation.evaluate' AND errors IS NOT NULL LIMIT 1`).Scan(&msg)
			return fmt.Errorf("%d evaluation jobs failed an attempt, e.g. %s", failed, msg)
		}
		if open == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d evaluation jobs still open after %s", open, within)
		}
		// The end of the run is read from the jobs' finalized_at, not from this loop, so
		// it can poll rarely: each poll is a count over river_job whose CPU would be
		// counted as the pipeline's.
		time.Sleep(100 * time.Millisecond)
	}
}

// runAutomation is the automation phase: o.rules rules in the seeded project, o.workers
// worker processes, o.warmup events worked first, then o.events events measured from the
// first emit to the last evaluation job's end (the chains their actions started
// included), and each execution's latency from its event to its row.
func runAutomation(ctx context.Context, db *store.DB, dbURL string, bus *event.Bus, c *client, s *seeded, o automationOptions) (automationResult, error) {
	res := automationResult{events: o.events, executions: map[string]int{}}
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range o.rules {
		body, _ := json.Marshal(benchRule(i, rng, s))
		if _, err := c.do(ctx, http.MethodPost, "/api/v1/projects/"+s.key+"/automation/rules", s.token, body, http.StatusCreated, true); err != nil {
			return res, fmt.Errorf("create rule %d: %w", i, err)
		}
	}
	issues, err := automationIssues(ctx, db, s, 2000)
	if err != nil {
		return res, err
	}
	if err := settle(ctx, db); err != nil {
		return res, err
	}
	// The per-project action rate (TW_AUTOMATION_PROJECT_RATE, 1,000 a minute by default)
	// would skip most of this one project's rules: the phase measures the engine's
	// capacity, so it runs without it.
	env := []string{"TW_DATABASE_URL=" + dbURL, "TW_JWT_SECRET=" + benchJWTSecret, "TW_LOG_LEVEL=warn",
		"TW_AUTOMATION_PROJECT_RATE=0"}
	procs, err := startWorkers(ctx, o.workers, env)
	if err != nil {
		return res, err
	}
	defer procs.stop()
	if err := procs.ready(ctx); err != nil {
		return res, err
	}
	// The events go in through a pool of their own, as many connections as an API
	// replica under load would use, so the load generator is not what limits the rate.
	edb, err := store.Open(ctx, dbURL, emitConns)
	if err != nil {
		return res, err
	}
	defer edb.Close()
	if o.warmup > 0 {
		if err := emitAutomationEvents(ctx, edb, bus, s, issues, 0, o.warmup, o.rate, o.batch); err != nil {
			return res, fmt.Errorf("warm-up: %w", err)
		}
		if err := awaitAutomation(ctx, db, 2*time.Minute); err != nil {
			return res, fmt.Errorf("warm-up: %w", err)
		}
	}

	pids, err := pipelinePIDs(ctx, db, procs)
	if err != nil {
		return res, err
	}
	cpuStart, cpuOK := machineCPU()
	ownStart := processCPU(pids)
	start := time.Now()
	if err := emitAutomationEvents(ctx, edb, bus, s, issues, o.warmup, o.events, o.rate, o.batch); err != nil {
		return res, fmt.Errorf("emit: %w", err)
	}
	res.emitted = time.Since(start)
	if err := awaitAutomation(ctx, db, 5*time.Minute); err != nil {
		return res, err
	}
	// Backends connected during the run count from zero.
	if pids, err = pipelinePIDs(ctx, db, procs); err != nil {
		return res, err
	}
	workerPIDs := map[int]bool{}
	for _, c := range procs.cmds {
		workerPIDs[c.Process.Pid] = true
	}
	for pid, d := range processCPU(pids) {
		d -= ownStart[pid]
		res.own += d
		switch {
		case pid == os.Getpid():
			res.bench += d
		case workerPIDs[pid]:
			res.workers += d
		default:
			res.postgres += d
		}
	}
	if end, ok := machineCPU(); ok && cpuOK {
		res.cpu = end.minus(cpuStart)
	}
	var last time.Time
	err = db.Pool.QueryRow(ctx, `SELECT count(*), max(finalized_at) FROM river_job
		WHERE kind = 'automation.evaluate' AND created_at >= $1`, start).Scan(&res.jobs, &last)
	if err != nil {
		return res, err
	}
	res.elapsed = last.Sub(start)
	rows, err := db.Pool.Query(ctx, `SELECT status, detail, chain_depth, extract(epoch FROM created_at - event_at)
		FROM automation_executions WHERE event_at >= $1`, start)
	if err != nil {
		return res, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			status string
			detail *string
			depth  int
			secs   float64
		)
		if err := rows.Scan(&status, &detail, &depth, &secs); err != nil {
			return res, err
		}
		res.executions[status]++
		if status != "SKIPPED" {
			res.acted++
		}
		if depth > 0 {
			res.chained++
		}
		res.latencies = append(res.latencies, max(time.Duration(secs*float64(time.Second)), 0))
	}
	sort.Slice(res.latencies, func(i, j int) bool { return res.latencies[i] < res.latencies[j] })
	return res, rows.Err()
}

// processCPU is the CPU time (user and system) each of the processes pids has used so
// far, from /proc/<pid>/stat; a process gone or unreadable is left out.
func processCPU(pids []int) map[int]time.Duration {
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The fields after the command name, which is in parentheses and may hold spaces.
		i := bytes.LastIndexByte(raw, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(raw[i+1:]))
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100
	}
	return out
}

// pipelinePIDs are this process, the workers and the Postgres backends serving the
// bench database: whose CPU the phase spends, apart from what other tenants of the
// machine do meanwhile.
func pipelinePIDs(ctx context.Context, db *store.DB, procs *workerProcs) ([]int, error) {
	pids := []int{os.Getpid()}
	for _, c := range procs.cmds {
		pids = append(pids, c.Process.Pid)
	}
	rows, err := db.Pool.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return nil, err
		}
		pids = append(pids, pid)
	}
	return pids, rows.Err()
}

// printAutomation reports the automation phase and its verdicts.
func printAutomation(o automationOptions, r automationResult) {
	fmt.Println()
	fmt.Printf("automation: %d enabled rules (%d triggers, three-level trees), %d issue events, %d worker processes, after %d warm-up events\n",
		o.rules, len(benchTriggers), o.events, o.workers, o.warmup)
	offered := "as fast as the emitters go"
	if o.rate > 0 {
		offered = fmt.Sprintf("%d/s", o.rate)
	}
	fmt.Printf("  offered %s (%d per transaction, %d connections): emitted in %s, %.0f/s; %d evaluation jobs (%d started by the rules' own changes)\n",
		offered, max(o.batch, 1), emitConns, r.emitted.Round(time.Millisecond), float64(o.events)/r.emitted.Seconds(), r.jobs, r.jobs-o.events)
	fmt.Printf("  executions: %d SUCCESS, %d SKIPPED, %d FAILED (%d with actions, %d of chained changes)\n",
		r.executions["SUCCESS"], r.executions["SKIPPED"], r.executions["FAILED"], r.acted, r.chained)
	fmt.Printf("  fully evaluated and acted on in %s: %.0f events/s\n", r.elapsed.Round(time.Millisecond), r.perSecond())
	fmt.Printf("  event-to-execution p50 %s, p99 %s, max %s\n", r.pct(50), r.pct(99), r.pct(100))
	if r.cpu.busy > 0 {
		wall := max(r.elapsed, r.emitted).Seconds() * float64(runtime.NumCPU())
		fmt.Printf("  machine CPU (every process) %s, %.0f%% of %d CPUs; stolen by the hypervisor %s\n",
			r.cpu.busy.Round(10*time.Millisecond), 100*r.cpu.busy.Seconds()/wall, runtime.NumCPU(), r.cpu.steal.Round(10*time.Millisecond))
	}
	if r.own > 0 {
		perEvent := r.own / time.Duration(r.events)
		fmt.Printf("  CPU of the pipeline itself (this process, the workers, their Postgres backends) %s: %s per event, %.0f events/s if it had the %d CPUs to itself\n",
			r.own.Round(10*time.Millisecond), perEvent.Round(10*time.Microsecond),
			float64(runtime.NumCPU())/perEvent.Seconds(), runtime.NumCPU())
		per := func(d time.Duration) time.Duration { return (d / time.Duration(r.events)).Round(10 * time.Microsecond) }
		fmt.Printf("  per event: emitting (this process) %s, worker processes %s, Postgres backends %s\n",
			per(r.bench), per(r.workers), per(r.postgres))
	}
	fmt.Printf("  %.0f events/s (target ≥ %d): %s\n", r.perSecond(), targetAutomationEventsPerSecond,
		verdict(r.perSecond() >= targetAutomationEventsPerSecond))
	fmt.Printf("  p99 %s (target ≤ %s): %s\n", r.pct(99), targetAutomationP99, verdict(r.pct(99) <= targetAutomationP99))
}
