package main

import (
	"context"
	"fmt"
	"time"

	"github.com/taskweave/taskweave/store"
)

// boardIssues is how many seeded issues the board phase puts in the active sprint.
const boardIssues = 500

// runBoard measures GET /projects/{key}/board on an ACTIVE sprint of 500 issues: it
// starts a sprint of the seeded project in SQL, assigns the project's first 500 issues
// to it (spread over the workflow's statuses, so every column has issues), warms up for
// a second, then loads the board from clients goroutines for d.
func runBoard(ctx context.Context, db *store.DB, stats *statementStats, c *client, s *seeded, clients int, d time.Duration) (result, error) {
	if err := boardSprint(ctx, db, s); err != nil {
		return result{}, err
	}
	return warmThenLoad(ctx, stats, clients, d, c.get(boardPath(s), s.token)), nil
}

// warmThenLoad runs o for a second, then measures it for d with the statements the
// server sent meanwhile: the warm-up's (and the setup's) are not counted, so the
// statements per request are the measured requests' own.
func warmThenLoad(ctx context.Context, stats *statementStats, clients int, d time.Duration, o op) result {
	load(ctx, clients, time.Second, o)
	before := stats.snapshot()
	res := load(ctx, clients, d, o)
	res.statements = stats.snapshot().minus(before)
	return res
}

func boardPath(s *seeded) string { return "/api/v1/projects/" + s.key + "/board" }

// runBoardPoll measures clients polling the unchanged board of runBoard with the ETag of
// their last read in If-None-Match: every answer is 304 without a body.
func runBoardPoll(ctx context.Context, stats *statementStats, c *client, s *seeded, clients int, d time.Duration) (result, error) {
	etag, err := c.etag(ctx, boardPath(s), s.token)
	if err != nil {
		return result{}, fmt.Errorf("board poll: %w", err)
	}
	return warmThenLoad(ctx, stats, clients, d, c.revalidate(boardPath(s), s.token, etag)), nil
}

// boardSprint starts the board phase's sprint and fills it.
func boardSprint(ctx context.Context, db *store.DB, s *seeded) error {
	var sprintID string
	err := db.Pool.QueryRow(ctx, `INSERT INTO sprints (project_id, name, goal, status, start_date, end_date)
		VALUES ($1, 'Bench sprint', 'Load the board', 'ACTIVE', current_date, current_date + 14) RETURNING id`,
		s.projectID).Scan(&sprintID)
	if err != nil {
		return fmt.Errorf("board: create sprint: %w", err)
	}
	tag, err := db.Pool.Exec(ctx, `WITH st AS (
			SELECT s.id, row_number() OVER (ORDER BY s.position) - 1 AS n, count(*) OVER () AS total
			FROM workflow_statuses AS s JOIN projects AS p ON p.workflow_id = s.workflow_id WHERE p.id = $1
		), pick AS (
			SELECT id, row_number() OVER (ORDER BY number) AS n FROM issues WHERE project_id = $1 ORDER BY number LIMIT $3
		)
		UPDATE issues AS i SET sprint_id = $2, status_id = st.id
		FROM pick, st WHERE i.id = pick.id AND st.n = pick.n % st.total`, s.projectID, sprintID, boardIssues)
	if err != nil {
		return fmt.Errorf("board: assign issues: %w", err)
	}
	if tag.RowsAffected() != boardIssues {
		return fmt.Errorf("board: %d issues assigned, want %d", tag.RowsAffected(), boardIssues)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE sprints SET planned_points =
		(SELECT coalesce(sum(story_points), 0) FROM issues WHERE sprint_id = $1) WHERE id = $1`, sprintID); err != nil {
		return fmt.Errorf("board: planned points: %w", err)
	}
	return nil
}
