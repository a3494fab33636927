package queue

import (
	"context"
	"fmt"
	"sort"

	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// QueueStats is one queue's health as support staff see it.
type QueueStats struct {
	Name      string
	Available int
	Scheduled int
	Running   int
	Retryable int
	Pending   int
	// Completed counts jobs completed in the last hour (CompletedWindow): River keeps
	// completed jobs for a day, and the recent rate is what tells a healthy queue.
	Completed int
	// Discarded and Cancelled count every such job River still keeps (seven days by
	// default): each one may need support's attention.
	Discarded int
	Cancelled int
	// OldestAvailableAgeSeconds is how long the oldest runnable job has waited; 0 when
	// nothing waits.
	OldestAvailableAgeSeconds float64
	// Paused is River's pause flag for the queue (river_queue.paused_at).
	Paused bool
}

// CompletedWindow is the window of QueueStats.Completed, as SQL interval text.
const CompletedWindow = "1 hour"

// Queues reports every queue the workers serve (jobs.Queues, in that order) and then
// any other queue named by a job or by River's queue table, by name; two queries.
func (s *Service) Queues(ctx context.Context) ([]QueueStats, error) {
	byName := map[string]*QueueStats{}
	var out []*QueueStats
	add := func(name string) *QueueStats {
		if q := byName[name]; q != nil {
			return q
		}
		q := &QueueStats{Name: name}
		byName[name] = q
		out = append(out, q)
		return q
	}
	for _, name := range jobs.Queues {
		add(name)
	}
	known := len(out)

	// Completed jobs older than the window are skipped by the WHERE, so the scan stays
	// on the live part of the table (River's state/finalized_at index).
	rows, err := s.db.QueryContext(ctx, `
		SELECT queue,
		       count(*) FILTER (WHERE state = 'available'),
		       count(*) FILTER (WHERE state = 'scheduled'),
		       count(*) FILTER (WHERE state = 'running'),
		       count(*) FILTER (WHERE state = 'retryable'),
		       count(*) FILTER (WHERE state = 'pending'),
		       count(*) FILTER (WHERE state = 'completed'),
		       count(*) FILTER (WHERE state = 'discarded'),
		       count(*) FILTER (WHERE state = 'cancelled'),
		       coalesce(extract(epoch FROM now() - min(scheduled_at) FILTER (WHERE state = 'available')), 0)::float8
		FROM river_job
		WHERE state <> 'completed' OR finalized_at > now() - interval '`+CompletedWindow+`'
		GROUP BY queue`)
	if err != nil {
		return nil, fmt.Errorf("queue stats: %w", store.Translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var st QueueStats
		if err := rows.Scan(&name, &st.Available, &st.Scheduled, &st.Running, &st.Retryable, &st.Pending,
			&st.Completed, &st.Discarded, &st.Cancelled, &st.OldestAvailableAgeSeconds); err != nil {
			return nil, fmt.Errorf("queue stats: %w", err)
		}
		st.Name = name
		st.OldestAvailableAgeSeconds = max(st.OldestAvailableAgeSeconds, 0)
		*add(name) = st
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("queue stats: %w", store.Translate(err))
	}

	// river_queue has a row per queue a worker has started, with its pause flag.
	prow, err := s.db.QueryContext(ctx, `SELECT name, paused_at IS NOT NULL FROM river_queue`)
	if err != nil {
		return nil, fmt.Errorf("queue pause flags: %w", store.Translate(err))
	}
	defer prow.Close()
	for prow.Next() {
		var name string
		var paused bool
		if err := prow.Scan(&name, &paused); err != nil {
			return nil, fmt.Errorf("queue pause flags: %w", err)
		}
		add(name).Paused = paused
	}
	if err := prow.Err(); err != nil {
		return nil, fmt.Errorf("queue pause flags: %w", store.Translate(err))
	}

	extra := out[known:]
	sort.Slice(extra, func(i, j int) bool { return extra[i].Name < extra[j].Name })
	res := make([]QueueStats, len(out))
	for i, q := range out {
		res[i] = *q
	}
	return res, nil
}
