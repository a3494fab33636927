package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/store"
)

// Targets of issue creation against pgbench running the same writes in the same run:
// in one project (every create serializes on the project's key counter) and spread
// over createProjects projects (no shared lock).
const (
	targetCreateOneRatio    = 0.9
	targetCreateOneP99      = 50 * time.Millisecond
	targetCreateSpreadRatio = 0.5
	createProjects          = 64
)

// benchProject is what a pgbench script needs of a project.
type benchProject struct {
	id, statusID uuid.UUID
	key          string
}

// pgbenchScript is one create transaction as pgbench runs it: the writes POST /issues
// makes with the bench's settings (the issue row; with the key counter taken in the
// same statement, as late as possible, and held to the commit), nothing else.
func pgbenchScript(p benchProject, reporter uuid.UUID) string {
	return fmt.Sprintf(`BEGIN;
WITH seq AS (UPDATE projects SET issue_seq = issue_seq + 1 WHERE id = '%[1]s' RETURNING issue_seq)
INSERT INTO issues (id, project_id, number, key, title, description, type, priority, status_id, reporter_id)
SELECT gen_random_uuid(), '%[1]s', seq.issue_seq, '%[2]s-' || seq.issue_seq, 'pgbench issue',
	'Created by the load generator.', 'TASK', 'HIGH', '%[3]s', '%[4]s'
FROM seq;
COMMIT;
`, p.id, p.key, p.statusID, reporter)
}

// pgbenchResult is what pgbench reports of a run.
type pgbenchResult struct {
	tps     float64
	latency time.Duration // average
	failed  int
	output  string
}

var (
	pgbenchTPS     = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	pgbenchLatency = regexp.MustCompile(`latency average = ([0-9.]+) ms`)
	pgbenchFailed  = regexp.MustCompile(`number of failed transactions: ([0-9]+)`)
)

// pgbenchPath finds pgbench: on PATH, else in Debian's postgresql-NN package.
func pgbenchPath() (string, error) {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	if len(matches) == 0 {
		return "", errors.New("pgbench not found (Debian: apt-get install postgresql-contrib)")
	}
	return matches[len(matches)-1], nil
}

// runPgbench runs the scripts (picked at random per transaction, equal weights) from
// clients connections for d against the database at url, prepared statements on.
func runPgbench(ctx context.Context, url string, scripts []string, clients int, d time.Duration) (pgbenchResult, error) {
	bin, err := pgbenchPath()
	if err != nil {
		return pgbenchResult{}, err
	}
	dir, err := os.MkdirTemp("", "taskweave-pgbench")
	if err != nil {
		return pgbenchResult{}, err
	}
	defer os.RemoveAll(dir)
	args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(clients), "-j", "2", "-T", strconv.Itoa(int(d.Seconds()))}
	for i, sc := range scripts {
		f := filepath.Join(dir, fmt.Sprintf("create-%d.sql", i))
		if err := os.WriteFile(f, []byte(sc), 0o600); err != nil {
			return pgbenchResult{}, err
		}
		args = append(args, "-f", f+"@1")
	}
	out, err := exec.CommandContext(ctx, bin, append(args, url)...).CombinedOutput()
	r := pgbenchResult{output: string(out)}
	if err != nil {
		return r, fmt.Errorf("pgbench: %w: %s", err, out)
	}
	m := pgbenchTPS.FindStringSubmatch(r.output)
	if m == nil {
		return r, fmt.Errorf("pgbench: no tps in %q", out)
	}
	r.tps, _ = strconv.ParseFloat(m[1], 64)
	if m := pgbenchLatency.FindStringSubmatch(r.output); m != nil {
		ms, _ := strconv.ParseFloat(m[1], 64)
		r.latency = time.Duration(ms * float64(time.Millisecond))
	}
	if m := pgbenchFailed.FindStringSubmatch(r.output); m != nil {
		r.failed, _ = strconv.Atoi(m[1])
	}
	return r, nil
}

// seedProjects creates n more projects of the bench user through the API, as the web
// client would, and reads their default statuses.
func seedProjects(ctx context.Context, db *store.DB, c *client, s *seeded, n int) ([]benchProject, error) {
	out := make([]benchProject, n)
	for i := range out {
		key := fmt.Sprintf("M%s%02d", strings.ToUpper(uuid.NewString()[:4]), i)
		body, _ := json.Marshal(map[string]string{"key": key, "name": "Bench " + key})
		raw, err := c.do(ctx, http.MethodPost, "/api/v1/projects", s.token, body, http.StatusCreated, true)
		if err != nil {
			return nil, err
		}
		var p struct {
			ID uuid.UUID `json:"id"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		out[i] = benchProject{id: p.ID, key: key}
		err = db.Pool.QueryRow(ctx, `SELECT s.id FROM workflow_statuses AS s JOIN projects AS p ON p.workflow_id = s.workflow_id
			WHERE p.id = $1 AND s.category = 'TODO' ORDER BY s.position LIMIT 1`, p.ID).Scan(&out[i].statusID)
		if err != nil {
			return nil, fmt.Errorf("default status of %s: %w", key, err)
		}
	}
	return out, nil
}

// postSpread is POST /issues into one of projects, picked at random per request.
func (c *client) postSpread(projects []benchProject, token string) op {
	return func(ctx context.Context, worker, seq int) error {
		p := projects[rand.IntN(len(projects))]
		body := fmt.Appendf(nil, `{"title":"Bench issue %d-%d","priority":"HIGH","description":"Created by the load generator."}`, worker, seq)
		_, err := c.do(ctx, http.MethodPost, "/api/v1/projects/"+p.key+"/issues", token, body, http.StatusCreated, false)
		return err
	}
}

// printCreateVersusPgbench reports one create comparison and its verdicts.
func printCreateVersusPgbench(name string, api result, pg pgbenchResult, ratioTarget float64, p99Target time.Duration) {
	ratio := api.rps() / pg.tps
	fmt.Printf("%s: POST /issues %.0f/s (p50 %s, p99 %s, %d errors, %s queries/req); pgbench same writes %.0f/s (avg %s, %d failed)\n",
		name, api.rps(), api.pct(50), api.pct(99), api.errors, api.perRequest(), pg.tps, pg.latency.Round(10*time.Microsecond), pg.failed)
	fmt.Printf("  API/pgbench %.2f (target ≥ %.1f): %s; errors %d (target 0): %s", ratio, ratioTarget, verdict(ratio >= ratioTarget),
		api.errors, verdict(api.errors == 0))
	if p99Target > 0 {
		fmt.Printf("; p99 %s (target ≤ %s): %s", api.pct(99), p99Target, verdict(api.pct(99) <= p99Target))
	}
	fmt.Println()
	if api.errors > 0 {
		fmt.Printf("  first error: %q\n", api.firstErr)
	}
}

// hasPhase reports whether the comma-separated phases name phase ("create" is not
// "create64").
func hasPhase(phases, phase string) bool { return slices.Contains(strings.Split(phases, ","), phase) }

// runCreate64 creates createProjects projects, then loads POST /issues spread over them
// for d (after a second of warm-up), then runs pgbench's same writes spread the same way;
// each from a settled database (vacuumed, analyzed, checkpointed), so neither pays for
// the writes before it.
func runCreate64(ctx context.Context, db *store.DB, c *client, s *seeded, url string, clients int, d time.Duration,
	stats *statementStats) (result, pgbenchResult, error) {
	projects, err := seedProjects(ctx, db, c, s, createProjects)
	if err != nil {
		return result{}, pgbenchResult{}, err
	}
	post := c.postSpread(projects, s.token)
	if err := settle(ctx, db); err != nil {
		return result{}, pgbenchResult{}, err
	}
	load(ctx, clients, time.Second, post)
	before := stats.snapshot()
	api := load(ctx, clients, d, post)
	api.statements = stats.snapshot().minus(before)
	scripts := make([]string, len(projects))
	for i, p := range projects {
		scripts[i] = pgbenchScript(p, s.userID)
	}
	if err := settle(ctx, db); err != nil {
		return api, pgbenchResult{}, err
	}
	pg, err := runPgbench(ctx, url, scripts, clients, d)
	return api, pg, err
}

// printCreates reports the create comparisons the phases ran.
func printCreates(phases string, audit bool, create result, pgOne pgbenchResult, spread result, pgSpread pgbenchResult) {
	if !hasPhase(phases, "pgbench") && !hasPhase(phases, "create64") {
		return
	}
	fmt.Println()
	if audit {
		fmt.Println("(-audit: the pgbench transactions write no audit job, so they are no ceiling of these creates)")
	}
	switch {
	case hasPhase(phases, "pgbench") && hasPhase(phases, "create"):
		printCreateVersusPgbench("one project", create, pgOne, targetCreateOneRatio, targetCreateOneP99)
	case hasPhase(phases, "pgbench"):
		fmt.Printf("pgbench same writes, one project: %.0f/s (avg %s)\n", pgOne.tps, pgOne.latency)
	}
	if hasPhase(phases, "create64") {
		printCreateVersusPgbench(fmt.Sprintf("%d projects", createProjects), spread, pgSpread, targetCreateSpreadRatio, 0)
	}
}
