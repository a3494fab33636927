package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store"
)

// targetSearchP99 is the p99 of a two-word search over 100,000 issues with comments.
const targetSearchP99 = 50 * time.Millisecond

// searchOptions size the search phase.
type searchOptions struct {
	issues   int
	comments int // per issue, on average
	clients  int
}

// searchResult is what the search phase measured.
type searchResult struct {
	seeded, backfill             time.Duration
	issues, comments             int
	matches                      []int
	list, api, ilike, ilikeWords result
	selective                    result // the queries matching under 1 % of the issues
	commentOn, commentOff        result
	titleOn, titleOff            result
}

// searchVocabulary is the seeded text's words: a hundred real ones first, then made-up
// words of two and three syllables. The seed draws word k with a probability falling
// steeply with k (the cube of a uniform draw), as in real text: the first words are in
// most issues, the last in a handful.
func searchVocabulary() []string {
	words := strings.Fields(`login page error crash timeout server client checkout payment cart order user
		account password email notification report export import dashboard board sprint issue comment
		attachment upload download search filter sort list view button link menu dialog form field
		value date number text label version release build deploy pipeline test unit integration
		database query index cache memory disk network proxy request response header token session
		cookie browser mobile android safari chrome firefox window tab scroll click drag drop save
		load slow fast broken missing wrong duplicate empty invalid failed running blocked stuck`)
	syl := strings.Fields("ka lo mi ne ru ta ve so pi da ze fo gu bi ho ja we ly xo qu")
	for _, a := range syl {
		for _, b := range syl {
			words = append(words, a+b+"n")
		}
	}
	for _, a := range syl {
		for _, b := range syl {
			for _, c := range syl {
				words = append(words, a+b+c)
			}
		}
	}
	return words
}

// searchQueries are the measured two-word queries: pairs of a frequent and a rarer
// word, and of two mid-frequency words (the last word a prefix, as typed).
func searchQueries(words []string) []string {
	return []string{
		"checkout timeout", "safari crash", "login " + words[150], words[200] + " " + words[600],
		"payment " + words[900], words[120] + " " + words[130], "export " + words[3000], "slow dashboard",
		words[400] + " " + words[2000], "session " + words[1200],
	}
}

// runSearch seeds its own project of o.issues issues with o.comments comments each on
// average (title 6 words, description 30, comment 20, drawn from searchVocabulary),
// then loads, for d each with o.clients clients, two-word searches: the list with q
// in the domain (issue.Service.List, page of 50 with total and highlights), the same
// through GET /issues?q=, and the ILIKE the list used before (the whole text as one
// substring of title or description, page of 50 with total) and ILIKE per word over
// title, description and comments. It then times comment inserts and title edits with
// the search triggers on and off, and the backfill of migration 0041 over the project.
func runSearch(ctx context.Context, db *store.DB, bus *event.Bus, c *client, s *seeded, o searchOptions, d time.Duration) (searchResult, error) {
	var res searchResult
	start := time.Now()
	words := searchVocabulary()
	projectID := uuid.New()
	key := "SRCH" + strings.ToUpper(uuid.NewString()[:4])
	if _, err := db.Pool.Exec(ctx, "INSERT INTO projects (id, key, name, owner_id) VALUES ($1, $2, 'Search bench', $3)",
		projectID, key, s.userID); err != nil {
		return res, fmt.Errorf("search project: %w", err)
	}
	wf, err := workflow.CreateDefault(ctx, db.Bun, projectID)
	if err != nil {
		return res, err
	}
	text := func(n, salt string) string {
		return `(SELECT string_agg(($3::text[])[1 + floor(cardinality($3::text[]) * power(random(), 3))::int], ' ')
			FROM generate_series(1, ` + n + ` + 0 * ` + salt + `))`
	}
	_, err = db.Pool.Exec(ctx, `INSERT INTO issues (project_id, number, key, title, description, type, priority, status_id, reporter_id)
		SELECT $1, g, $2 || '-' || g, `+text("6", "g")+`, `+text("30", "g")+`, 'TASK', 'MEDIUM',
			(SELECT id FROM workflow_statuses WHERE workflow_id = $4 AND category = 'TODO' ORDER BY position LIMIT 1), $5
		FROM generate_series(1, $6::int) AS g`, projectID, key, words, wf.ID, s.userID, o.issues)
	if err != nil {
		return res, fmt.Errorf("search issues: %w", err)
	}
	if _, err := db.Pool.Exec(ctx, "UPDATE projects SET issue_seq = $2 WHERE id = $1", projectID, o.issues); err != nil {
		return res, err
	}
	// Comments in batches of 20,000 issues: each statement's trigger syncs its issues.
	for from := 1; from <= o.issues; from += 20000 {
		_, err = db.Pool.Exec(ctx, `INSERT INTO comments (issue_id, author_id, body)
			SELECT i.id, $2, `+text("20", "k")+`
			FROM issues AS i, generate_series(1, $4::int * 2) AS k
			WHERE i.project_id = $1 AND i.number BETWEEN $5 AND $5 + 19999 AND k <= 1 + (i.number * 7919) % ($4::int * 2)`,
			projectID, s.userID, words, o.comments, from)
		if err != nil {
			return res, fmt.Errorf("search comments: %w", err)
		}
	}
	if _, err := db.Pool.Exec(ctx, "VACUUM ANALYZE issues, comments, issue_search"); err != nil {
		return res, err
	}
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM issues WHERE project_id = $1),
		(SELECT count(*) FROM comments AS c JOIN issues AS i ON i.id = c.issue_id WHERE i.project_id = $1)`,
		projectID).Scan(&res.issues, &res.comments); err != nil {
		return res, err
	}
	res.seeded = time.Since(start)

	queries := searchQueries(words)
	svc := issue.NewService(db, bus)
	p := issue.Project{ID: projectID, Key: key, WorkflowID: &wf.ID}
	// The matches of each query, every one counted (the list's own total stops at
	// issue.SearchCountAhead past the page).
	for _, q := range queries {
		var n int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM issue_search
			WHERE project_id = $1 AND doc_en @@ regexp_replace(websearch_to_tsquery('english', $2)::text, '''$', ''':*')::tsquery`,
			projectID, q).Scan(&n); err != nil {
			return res, fmt.Errorf("search %q: %w", q, err)
		}
		res.matches = append(res.matches, n)
	}
	pick := func(seq int) string { return queries[seq%len(queries)] }
	run := func(do op) result {
		load(ctx, o.clients, time.Second, do) // warm-up: plans and caches
		return load(ctx, o.clients, d, do)
	}
	res.list = run(func(ctx context.Context, _, seq int) error {
		_, _, err := svc.List(ctx, p, issue.Filter{Q: pick(seq), Lang: "en"}, 0, 50)
		return err
	})
	var narrow []string
	for i, q := range queries {
		if res.matches[i]*100 < o.issues {
			narrow = append(narrow, q)
		}
	}
	if len(narrow) > 0 {
		res.selective = run(func(ctx context.Context, _, seq int) error {
			_, _, err := svc.List(ctx, p, issue.Filter{Q: narrow[seq%len(narrow)], Lang: "en"}, 0, 50)
			return err
		})
	}
	res.api = run(func(ctx context.Context, w, seq int) error {
		return c.get("/api/v1/projects/"+key+"/issues?size=50&q="+url.QueryEscape(pick(seq)), s.token)(ctx, w, seq)
	})
	ilike := func(sql string, args func(q string) []any) op {
		return func(ctx context.Context, _, seq int) error {
			rows, err := db.Pool.Query(ctx, sql, args(pick(seq))...)
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			rows.Close()
			return rows.Err()
		}
	}
	like := func(s string) string {
		return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s) + "%"
	}
	res.ilike = run(ilike(`SELECT i.id, i.key, i.title, count(*) OVER () FROM issues AS i
		WHERE i.project_id = $1 AND (i.title ILIKE $2 OR i.description ILIKE $2) ORDER BY i.number LIMIT 50`,
		func(q string) []any { return []any{projectID, like(q)} }))
	res.ilikeWords = run(ilike(`SELECT i.id, i.key, i.title, count(*) OVER () FROM issues AS i
		WHERE i.project_id = $1 AND (SELECT bool_and(i.title ILIKE w OR i.description ILIKE w OR EXISTS (
			SELECT 1 FROM comments AS c WHERE c.issue_id = i.id AND c.deleted_at IS NULL AND c.body ILIKE w)) FROM unnest($2::text[]) AS w)
		ORDER BY i.number LIMIT 50`,
		func(q string) []any {
			ws := strings.Fields(q)
			for i := range ws {
				ws[i] = like(ws[i])
			}
			return []any{projectID, ws}
		}))

	// The triggers' cost: a comment insert and a title edit, on and off.
	comment := func(ctx context.Context, _, seq int) error {
		_, err := db.Pool.Exec(ctx, `INSERT INTO comments (issue_id, author_id, body)
			SELECT id, $3, 'bench comment about the checkout timeout' FROM issues WHERE project_id = $1 AND number = $2`,
			projectID, 1+(seq*7919)%o.issues, s.userID)
		return err
	}
	title := func(ctx context.Context, _, seq int) error {
		_, err := db.Pool.Exec(ctx, `UPDATE issues SET title = 'Edited title ' || $3::int, updated_at = clock_timestamp()
			WHERE project_id = $1 AND number = $2`, projectID, 1+(seq*104729)%o.issues, seq)
		return err
	}
	res.commentOn, res.titleOn = run(comment), run(title)
	if _, err := db.Pool.Exec(ctx, `ALTER TABLE comments DISABLE TRIGGER issue_search_comment_insert;
		ALTER TABLE issues DISABLE TRIGGER issue_search_update`); err != nil {
		return res, err
	}
	res.commentOff, res.titleOff = run(comment), run(title)
	if _, err := db.Pool.Exec(ctx, `ALTER TABLE comments ENABLE TRIGGER issue_search_comment_insert;
		ALTER TABLE issues ENABLE TRIGGER issue_search_update`); err != nil {
		return res, err
	}

	// The backfill statement of migration 0041 over this project, into a scratch table.
	t := time.Now()
	if _, err := db.Pool.Exec(ctx, `CREATE TEMP TABLE search_backfill ON COMMIT DROP AS
		SELECT * FROM issue_search_rows(ARRAY(SELECT id FROM issues WHERE project_id = $1))`, projectID); err != nil {
		return res, fmt.Errorf("backfill: %w", err)
	}
	res.backfill = time.Since(t)

	return res, nil
}

// printSearch reports the search phase beside ILIKE and its verdict.
func printSearch(o searchOptions, r searchResult) {
	fmt.Println()
	fmt.Printf("search: %d issues, %d comments, seeded with their documents in %s; migration 0041's backfill over them: %s\n",
		r.issues, r.comments, r.seeded.Round(time.Millisecond), r.backfill.Round(time.Millisecond))
	fmt.Printf("  matches per query (of %d issues): %v\n", r.issues, r.matches)
	fmt.Printf("  %-52s %9s %10s %10s\n", "two-word query, page of 50 with total, "+fmt.Sprint(o.clients)+" clients", "req/s", "p50", "p99")
	for _, row := range []struct {
		name string
		r    result
	}{
		{"full-text, issue.Service.List (rank, highlight)", r.list},
		{"full-text, the queries matching < 1 % of issues", r.selective},
		{"full-text, GET /issues?q= over HTTP", r.api},
		{"ILIKE text in title or description (old q)", r.ilike},
		{"ILIKE each word in title, description, comments", r.ilikeWords},
		{"comment insert, search trigger on", r.commentOn},
		{"comment insert, search trigger off", r.commentOff},
		{"title edit, search trigger on", r.titleOn},
		{"title edit, search trigger off", r.titleOff},
	} {
		errs := ""
		if row.r.errors > 0 {
			errs = fmt.Sprintf(" (%d errors: %s)", row.r.errors, row.r.firstErr)
		}
		fmt.Printf("  %-52s %9.0f %10s %10s%s\n", row.name, row.r.rps(), row.r.pct(50), row.r.pct(99), errs)
	}
	fmt.Printf("  full-text p99 %s (target ≤ %s): %s\n", r.list.pct(99), targetSearchP99, verdict(r.list.pct(99) <= targetSearchP99))
}
