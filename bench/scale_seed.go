package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store"
)

// scaleSize is one instance of the scale phase: every table sized from its issue count
// in the proportions of the reference instance (1,000,000 issues over 1,000 projects,
// one of them holding a tenth, 3 comments, 10 audit rows, 2 activity rows, one finished
// River job per issue, a webhook delivery per two).
type scaleSize struct {
	issues, projects, big               int
	comments, audit, activities, jobs   int
	deliveries, webhooks, closedSprints int
	// auditDays is the span of the audit log, and of the comments and activities: a
	// young instance has less history, not a denser one. At the reference size the log
	// holds two years; every size writes the same rows per day.
	auditDays float64
}

func sizeFor(issues int) scaleSize {
	z := scaleSize{issues: issues, projects: max(2, issues/1000), big: issues / 10}
	z.comments, z.audit, z.activities, z.jobs, z.deliveries = 3*issues, 10*issues, 2*issues, issues, issues/2
	z.webhooks = min(z.projects, 100)
	z.closedSprints = 10
	z.auditDays = 730 * float64(issues) / 1e6
	return z
}

// scaleSeeded is what the measurements need of a seeded instance.
type scaleSeeded struct {
	*seeded
	size        scaleSize
	adminToken  string
	closedID    uuid.UUID // a closed sprint of the big project (burndown, cycle time)
	issueCounts []int
}

// copyRows streams n rows of row(i) into table by COPY.
func copyRows(ctx context.Context, db *store.DB, table string, cols []string, n int, row func(i int) []any) error {
	i := 0
	got, err := db.Pool.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromFunc(func() ([]any, error) {
		if i >= n {
			return nil, nil
		}
		i++
		return row(i - 1), nil
	}))
	if err != nil {
		return fmt.Errorf("copy %s: %w", table, err)
	}
	if int(got) != n {
		return fmt.Errorf("copy %s: %d rows, want %d", table, got, n)
	}
	return nil
}

// copyParallel splits a COPY of n rows over parts connections (each part its own COPY).
func copyParallel(ctx context.Context, db *store.DB, table string, cols []string, n, parts int, row func(i int) []any) error {
	var wg sync.WaitGroup
	errs := make([]error, parts)
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = copyRows(ctx, db, table, cols, hi-lo, func(i int) []any { return row(lo + i) })
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

type issueRef struct {
	id, project uuid.UUID
	number      int
	key         string
}

// seedScale fills a fresh instance. The big project is made as the other phases make
// theirs (seed: the API for the user, project, labels and custom fields, one INSERT …
// SELECT for its issues); everything else is COPYed straight into the tables.
func seedScale(ctx context.Context, db *store.DB, c *client, z scaleSize, logf func(string, ...any)) (*scaleSeeded, error) {
	t := time.Now()
	s, err := seed(ctx, db, c, z.big, false, true)
	if err != nil {
		return nil, err
	}
	out := &scaleSeeded{seeded: s, size: z}
	logf("big project %s: %d issues (%s)", s.key, z.big, time.Since(t).Round(time.Millisecond))

	// The owner becomes a system ADMIN (the audit export and the jobs list); the new role
	// is in a fresh token.
	if _, err := db.Pool.Exec(ctx, "UPDATE users SET system_role = 'ADMIN' WHERE id = $1", s.userID); err != nil {
		return nil, err
	}
	out.adminToken, err = c.accessToken(ctx, "/api/v1/auth/login",
		map[string]string{"email": s.email, "password": "bench password 123"}, http.StatusOK)
	if err != nil {
		return nil, err
	}

	// The other projects, each with its default workflow.
	t = time.Now()
	type proj struct {
		id, status uuid.UUID
		key        string
	}
	projects := make([]proj, z.projects-1)
	for i := range projects {
		projects[i] = proj{id: uuid.New(), key: fmt.Sprintf("S%s%d", strings.ToUpper(s.key[1:4]), i)}
	}
	if err := copyRows(ctx, db, "projects", []string{"id", "key", "name", "owner_id"}, len(projects), func(i int) []any {
		return []any{projects[i].id, projects[i].key, "Scale project " + projects[i].key, s.userID}
	}); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(projects); i += 4 {
				if _, err := workflow.CreateDefault(ctx, db.Bun, projects[i].id); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("workflows: %w", err)
		}
	}
	todo := map[uuid.UUID]uuid.UUID{}
	rows, err := db.Pool.Query(ctx, `SELECT DISTINCT ON (p.id) p.id, s.id FROM projects AS p
		JOIN workflow_statuses AS s ON s.workflow_id = p.workflow_id AND s.category = 'TODO' ORDER BY p.id, s.position`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var p, st uuid.UUID
		if err := rows.Scan(&p, &st); err != nil {
			return nil, err
		}
		todo[p] = st
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range projects {
		projects[i].status = todo[projects[i].id]
	}
	logf("%d more projects with workflows (%s)", len(projects), time.Since(t).Round(time.Millisecond))

	// Issues of the other projects, by COPY; then every issue's id for the children.
	t = time.Now()
	rest := z.issues - z.big
	refs := make([]issueRef, 0, z.issues)
	rows, err = db.Pool.Query(ctx, "SELECT id, number, key FROM issues WHERE project_id = $1 ORDER BY number", s.projectID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		r := issueRef{project: s.projectID}
		if err := rows.Scan(&r.id, &r.number, &r.key); err != nil {
			return nil, err
		}
		refs = append(refs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	perProject := make([]int, len(projects))
	for i := range rest {
		p := i % len(projects)
		perProject[p]++
		refs = append(refs, issueRef{id: uuid.New(), project: projects[p].id, number: perProject[p],
			key: fmt.Sprintf("%s-%d", projects[p].key, perProject[p])})
	}
	now := time.Now().UTC()
	span := time.Duration(z.auditDays * float64(24*time.Hour))
	// at spreads i of n over the instance's history, oldest first.
	at := func(i, n int) time.Time { return now.Add(-span + time.Duration(float64(span)*float64(i)/float64(n))) }
	types := []string{"EPIC", "STORY", "BUG", "TASK"}
	prios := []string{"CRITICAL", "HIGH", "MEDIUM", "LOW"}
	if err := copyParallel(ctx, db, "issues", []string{"id", "project_id", "number", "key", "title", "description", "type",
		"priority", "status_id", "reporter_id", "created_at", "updated_at"}, rest, 2, func(i int) []any {
		r := refs[z.big+i]
		ts := at(i, rest)
		return []any{r.id, r.project, r.number, r.key, "Scale issue " + r.key, "Seeded description of " + r.key,
			types[i%4], prios[i%4], projects[i%len(projects)].status, s.userID, ts, ts}
	}); err != nil {
		return nil, err
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE projects AS p SET issue_seq = c.n
		FROM (SELECT project_id, max(number) AS n FROM issues GROUP BY project_id) AS c WHERE c.project_id = p.id`); err != nil {
		return nil, err
	}
	logf("%d issues by COPY (%s)", rest, time.Since(t).Round(time.Millisecond))

	t = time.Now()
	if err := copyParallel(ctx, db, "comments", []string{"id", "issue_id", "author_id", "body", "created_at", "updated_at"},
		z.comments, 2, func(i int) []any {
			ts := at(i, z.comments)
			return []any{uuid.New(), refs[i%len(refs)].id, s.userID, "Seeded comment number " + fmt.Sprint(i) +
				" with a sentence or two of text, as comments have.", ts, ts}
		}); err != nil {
		return nil, err
	}
	logf("%d comments (%s)", z.comments, time.Since(t).Round(time.Millisecond))

	t = time.Now()
	if err := copyParallel(ctx, db, "issue_activities", []string{"id", "issue_id", "actor_id", "type", "old_value", "new_value",
		"created_at"}, z.activities, 2, func(i int) []any {
		return []any{uuid.New(), refs[i%len(refs)].id, s.userID, "PRIORITY_CHANGED", "LOW", "HIGH", at(i, z.activities)}
	}); err != nil {
		return nil, err
	}
	logf("%d activity rows (%s)", z.activities, time.Since(t).Round(time.Millisecond))

	t = time.Now()
	// The audit log's months have their partitions, as migration 0045 makes them for
	// an existing log and the maintenance job for each new month.
	for m := now.Add(-span); !m.After(now); m = m.AddDate(0, 1, 0) {
		if _, err := audit.EnsurePartitions(ctx, db.Bun, m); err != nil {
			return nil, err
		}
	}
	actions := []string{"ISSUE_CREATED", "ISSUE_UPDATED", "ISSUE_UPDATED", "COMMENT_ADDED", "ISSUE_UPDATED",
		"ISSUE_STATUS_CHANGED", "ISSUE_UPDATED", "COMMENT_ADDED", "ISSUE_ASSIGNED", "ISSUE_UPDATED"}
	if err := copyParallel(ctx, db, "audit_events", []string{"id", "timestamp", "user_id", "user_email", "project_id", "action",
		"level", "resource_type", "resource_id", "details", "ip_address", "user_agent"}, z.audit, 2, func(i int) []any {
		r := refs[i%len(refs)]
		return []any{uuid.New(), at(i, z.audit), s.userID, s.email, r.project, actions[i%len(actions)], "WRITE", "ISSUE",
			r.id.String(), `{"issueKey":"` + r.key + `"}`, "10.0.0.1", "bench/1.0"}
	}); err != nil {
		return nil, err
	}
	logf("%d audit rows (%s)", z.audit, time.Since(t).Round(time.Millisecond))

	// Finished River jobs over the last day (River's default retention of completed
	// jobs), of the kinds the API and the workers insert.
	t = time.Now()
	kinds := [][2]string{{"audit.record", "audit"}, {"notify.event", "notifications"}, {"integration.event", "integrations"},
		{"automation.evaluate", "automation"}, {"webhook.deliver", "webhooks"}}
	if err := copyParallel(ctx, db, "river_job", []string{"state", "attempt", "max_attempts", "attempted_at", "created_at",
		"finalized_at", "scheduled_at", "priority", "args", "attempted_by", "kind", "queue"}, z.jobs, 2, func(i int) []any {
		ts := now.Add(-24*time.Hour + time.Duration(float64(24*time.Hour)*float64(i)/float64(z.jobs)))
		r := refs[i%len(refs)]
		k := kinds[i%len(kinds)]
		return []any{"completed", 1, 25, ts, ts, ts.Add(5 * time.Millisecond), ts, 1,
			`{"issueId":"` + r.id.String() + `","projectId":"` + r.project.String() + `"}`, []string{"bench"}, k[0], k[1]}
	}); err != nil {
		return nil, err
	}
	logf("%d finished River jobs (%s)", z.jobs, time.Since(t).Round(time.Millisecond))

	// Webhooks of the first projects, and their deliveries over the last 30 days
	// (TW_WEBHOOK_RETENTION's default).
	t = time.Now()
	hooks := make([]uuid.UUID, z.webhooks)
	for i := range hooks {
		hooks[i] = uuid.New()
	}
	if err := copyRows(ctx, db, "webhooks", []string{"id", "project_id", "url", "secret", "events", "created_by"}, len(hooks),
		func(i int) []any {
			p := s.projectID
			if i > 0 {
				p = projects[i-1].id
			}
			return []any{hooks[i], p, "https://hooks.example.com/" + fmt.Sprint(i), "bench-secret", []string{"issue.created"}, s.userID}
		}); err != nil {
		return nil, err
	}
	month := 30 * 24 * time.Hour
	if err := copyRows(ctx, db, "webhook_deliveries", []string{"id", "webhook_id", "event_type", "payload", "response_status",
		"attempt_count", "delivered_at", "created_at"}, z.deliveries, func(i int) []any {
		ts := now.Add(-month + time.Duration(float64(month)*float64(i)/float64(z.deliveries)))
		r := refs[i%len(refs)]
		return []any{uuid.New(), hooks[i%len(hooks)], "issue.created", `{"event":"issue.created","issue":{"id":"` + r.id.String() +
			`","key":"` + r.key + `"}}`, 200, 1, ts.Add(30 * time.Millisecond), ts}
	}); err != nil {
		return nil, err
	}
	logf("%d webhook deliveries (%s)", z.deliveries, time.Since(t).Round(time.Millisecond))

	// Ten closed sprints of 50 issues each in the big project (after the first 500, which
	// the board phase takes), each issue moved to IN_PROGRESS and then DONE.
	t = time.Now()
	err = db.Pool.QueryRow(ctx, `WITH sp AS (
		INSERT INTO sprints (project_id, name, status, start_date, end_date, planned_points, completed_points, created_at)
		SELECT $1, 'Closed sprint ' || g, 'CLOSED', current_date - 14 * ($2 - g + 1), current_date - 14 * ($2 - g), 100, 80,
			now() - make_interval(days => 14 * ($2 - g + 1))
		FROM generate_series(1, $2) AS g RETURNING id, name
	), n AS (
		SELECT id, row_number() OVER (ORDER BY name) AS k FROM sp
	), st AS (
		SELECT s.category, s.id FROM workflow_statuses AS s JOIN projects AS p ON p.workflow_id = s.workflow_id
		WHERE p.id = $1 AND s.category IN ('IN_PROGRESS', 'DONE')
	), moved AS (
		UPDATE issues AS i SET sprint_id = n.id, status_id = (SELECT id FROM st WHERE category = 'DONE' LIMIT 1), story_points = 3
		FROM n WHERE i.project_id = $1 AND i.number > 500 AND i.number <= 500 + 50 * $2 AND (i.number - 501) / 50 + 1 = n.k
		RETURNING i.id, i.created_at
	), act AS (
		INSERT INTO issue_activities (issue_id, actor_id, type, old_value, new_value, new_status_id, created_at)
		SELECT m.id, $3, 'STATUS_CHANGED', 'To Do', st.category, st.id,
			m.created_at + CASE st.category WHEN 'IN_PROGRESS' THEN interval '1 hour' ELSE interval '2 days' END
		FROM moved AS m CROSS JOIN (SELECT DISTINCT ON (category) category, id FROM st ORDER BY category, id) AS st
	)
	SELECT id FROM n ORDER BY k DESC LIMIT 1`, s.projectID, z.closedSprints, s.userID).Scan(&out.closedID)
	if err != nil {
		return nil, fmt.Errorf("closed sprints: %w", err)
	}
	logf("%d closed sprints (%s)", z.closedSprints, time.Since(t).Round(time.Millisecond))

	// As autovacuum would after the load: statistics and the visibility map.
	t = time.Now()
	if _, err := db.Pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return nil, err
	}
	logf("VACUUM ANALYZE (%s)", time.Since(t).Round(time.Millisecond))
	return out, nil
}
