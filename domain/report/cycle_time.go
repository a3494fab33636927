package report

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// IssueCycle is one issue's cycle time in whole minutes; nil when rule 3 leaves it empty
// (report rules: docs/api-conventions.md#reports).
type IssueCycle struct {
	IssueID  uuid.UUID `bun:"id"`
	IssueKey string    `bun:"key"`
	Minutes  *int64    `bun:"minutes"`
}

// Hours is the cycle time in hours (minutes / 60), nil when empty.
func (c IssueCycle) Hours() *float64 {
	if c.Minutes == nil {
		return nil
	}
	h := float64(*c.Minutes) / 60
	return &h
}

// SprintCycle is the cycle time of every issue of a sprint, in key order, with the
// average over the issues that have one (nil when none has).
type SprintCycle struct {
	SprintID     uuid.UUID
	Issues       []IssueCycle
	AverageHours *float64
}

// SprintAverage is one CLOSED sprint's average cycle time in hours, nil when none of its
// issues has one.
type SprintAverage struct {
	SprintID     uuid.UUID `bun:"id"`
	SprintName   string    `bun:"name"`
	AverageHours *float64  `bun:"average_hours"`
}

// issueMinutes is rule 3 for the issues the filter selects (issue alias i), as rows
// (issue_id, minutes). Each STATUS_CHANGED row's target category comes from the status id
// the row carries (docs/api-conventions.md#deliberate-choices); rows without one (written
// before ids were stored) or whose status was deleted fall back to the status of that
// name in the project's workflow, the lowest position winning when two share the name.
// The first move into IN_PROGRESS and the first into DONE count; the time is empty unless
// DONE is strictly later. Minutes are whole minutes, truncated.
func issueMinutes(filter string) string {
	return `
SELECT m.issue_id,
	CASE WHEN m.finished > m.started THEN floor(extract(epoch FROM m.finished - m.started) / 60)::bigint END AS minutes
FROM (
	SELECT a.issue_id,
		min(a.created_at) FILTER (WHERE st.category = 'IN_PROGRESS') AS started,
		min(a.created_at) FILTER (WHERE st.category = 'DONE') AS finished
	FROM issues AS i
	JOIN issue_activities AS a ON a.issue_id = i.id AND a.type = 'STATUS_CHANGED'
	CROSS JOIN LATERAL (SELECT coalesce(
		(SELECT ws.category FROM workflow_statuses AS ws WHERE ws.id = a.new_status_id),
		(SELECT ws.category FROM workflow_statuses AS ws JOIN projects AS p ON p.workflow_id = ws.workflow_id
			WHERE p.id = i.project_id AND ws.name = a.new_value ORDER BY ws.position, ws.id LIMIT 1)) AS category
	) AS st
	WHERE ` + filter + `
	GROUP BY a.issue_id
) AS m`
}

// sprintCycleQuery lists every issue of sprint ?0 of project ?1 with its minutes; the
// project condition lets the (project_id, sprint_id) index find the issues.
var sprintCycleQuery = `WITH cycles AS (` + issueMinutes(`i.project_id = ?1 AND i.sprint_id = ?0`) + `)
SELECT i.id, i.key, c.minutes FROM issues AS i LEFT JOIN cycles AS c ON c.issue_id = i.id
WHERE i.project_id = ?1 AND i.sprint_id = ?0 ORDER BY i.number`

// closedAveragesQuery averages the minutes per CLOSED sprint of project ?0, one sprint
// at a time: each sprint's issues are found by the (project_id, sprint_id) index as in
// sprintCycleQuery, so the cost follows the closed sprints' issues, not the project's.
// (One join over all closed sprints at once let the planner read the activity of every
// issue of the project: 2.55 s p99 in a project of 100,000 issues against 73 ms in one
// of 1,000, docs/performance.md#the-scale-bench.) An issue without a cycle time, and a
// sprint without issues, count as in CycleTime: avg ignores them, null when none has one.
var closedAveragesQuery = `SELECT s.id, s.name, (c.minutes / 60)::float8 AS average_hours
FROM sprints AS s
CROSS JOIN LATERAL (SELECT avg(x.minutes) AS minutes FROM (` + issueMinutes(`i.project_id = ?0 AND i.sprint_id = s.id`) + `) AS x) AS c
WHERE s.project_id = ?0 AND s.status = 'CLOSED'
ORDER BY s.created_at, s.id`

// CycleTime computes rule 3 for every issue of a sprint of the project; an empty sprint
// gives an empty list (rule 4).
func CycleTime(ctx context.Context, db bun.IDB, projectID, sprintID uuid.UUID) (*SprintCycle, error) {
	if err := checkSprint(ctx, db, projectID, sprintID); err != nil {
		return nil, err
	}
	c := &SprintCycle{SprintID: sprintID, Issues: []IssueCycle{}}
	if err := db.NewRaw(sprintCycleQuery, sprintID, projectID).Scan(ctx, &c.Issues); err != nil {
		return nil, fmt.Errorf("cycle time of sprint %s: %w", sprintID, err)
	}
	var sum, n int64
	for _, is := range c.Issues {
		if is.Minutes != nil {
			sum += *is.Minutes
			n++
		}
	}
	if n > 0 {
		avg := float64(sum) / float64(n) / 60
		c.AverageHours = &avg
	}
	return c, nil
}

// CycleTimeBySprint averages rule 3 per CLOSED sprint of the project, in creation order
// (as Velocity).
func CycleTimeBySprint(ctx context.Context, db bun.IDB, projectID uuid.UUID) ([]SprintAverage, error) {
	out := []SprintAverage{}
	if err := db.NewRaw(closedAveragesQuery, projectID).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("cycle time of project %s: %w", projectID, err)
	}
	return out, nil
}
