package report

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// DefaultSprintDays is how long a sprint without an end date runs, counting its start
// day: its last day is startDate + 13 (docs/api-conventions.md#reports).
const DefaultSprintDays = 14

// Day is one point of a burndown chart.
type Day struct {
	// Date is the plain date (YYYY-MM-DD, a UTC day).
	Date            string `bun:"date"`
	IdealPoints     int64  `bun:"ideal_points"`
	RemainingPoints int64  `bun:"remaining_points"`
}

// Burndown is a sprint's chart: one Day per date from startDate to endDate inclusive,
// none without a startDate.
type Burndown struct {
	SprintID uuid.UUID
	Days     []Day
}

// burndownQuery computes report rule 2 (docs/api-conventions.md#reports) for sprint ?0 of
// project ?3 with today = ?1 in one statement; ?2 is the last day's distance from the
// start without an end date (DefaultSprintDays − 1). Issues are looked up by
// (project_id, sprint_id), the columns of their index.
//
// length is endDate − startDate in days, so day index d runs 0..length and the ideal line
// falls from the planned points on the first day to 0 on the last (a one-day sprint,
// length 0, shows the planned points). Days are UTC days: an issue "last updated before
// the end of" a date was updated before the next UTC midnight. A sprint whose end lies
// before its start has no days.
const burndownQuery = `
WITH s AS (
	SELECT start_date AS first_day, coalesce(end_date, start_date + ?2::integer) AS last_day, planned_points
	FROM sprints WHERE id = ?0 AND start_date IS NOT NULL
), pts AS (
	SELECT coalesce(i.story_points, 0)::bigint AS points, ws.category = 'DONE' AS done, i.updated_at
	FROM issues AS i JOIN workflow_statuses AS ws ON ws.id = i.status_id
	WHERE i.project_id = ?3 AND i.sprint_id = ?0
), planned AS (
	SELECT coalesce((SELECT planned_points FROM s)::bigint, (SELECT sum(points) FROM pts)::bigint, 0) AS points
)
SELECT to_char(g.day, 'YYYY-MM-DD') AS date,
	CASE WHEN s.last_day = s.first_day THEN planned.points
		ELSE planned.points * ((s.last_day - s.first_day) - (g.day - s.first_day)) / (s.last_day - s.first_day) END AS ideal_points,
	CASE WHEN g.day > ?1::date
		THEN (SELECT coalesce(sum(points), 0) FROM pts WHERE NOT done)
		ELSE (SELECT coalesce(sum(points), 0) FROM pts
			WHERE NOT (done AND updated_at < (g.day + 1)::timestamp AT TIME ZONE 'UTC')) END AS remaining_points
FROM s CROSS JOIN planned
CROSS JOIN LATERAL (SELECT d::date AS day FROM generate_series(s.first_day::timestamp, s.last_day::timestamp, interval '1 day') AS d) AS g
ORDER BY g.day`

// BurndownOf computes rule 2 for a sprint of the project. today decides which dates lie
// in the future (their remaining points are the current not-done total).
func BurndownOf(ctx context.Context, db bun.IDB, projectID, sprintID uuid.UUID, today time.Time) (*Burndown, error) {
	if err := checkSprint(ctx, db, projectID, sprintID); err != nil {
		return nil, err
	}
	b := &Burndown{SprintID: sprintID, Days: []Day{}}
	if err := db.NewRaw(burndownQuery, sprintID, today.UTC().Format(time.DateOnly), DefaultSprintDays-1, projectID).Scan(ctx, &b.Days); err != nil {
		return nil, fmt.Errorf("burndown of sprint %s: %w", sprintID, err)
	}
	return b, nil
}
