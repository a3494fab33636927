// Package queue reads River's tables for queue health: the Prometheus collector of
// every process and, later, the support staff's job views.
package queue

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// Collector exports queue depth by state and the age of the oldest available job,
// read from Postgres on each scrape, so every replica reports the shared truth.
type Collector struct {
	pool   *pgxpool.Pool
	log    *slog.Logger
	jobs   *prometheus.Desc
	oldest *prometheus.Desc
	// refreshAfter is the age from which the finished jobs' counts are counted again
	// (FinishedRefresh; 0: at every scrape, for tests); refreshing keeps this process
	// from starting a second background count while one runs.
	refreshAfter time.Duration
	refreshing   atomic.Bool
}

// FinishedRefresh is how old the finished jobs' counts (queue_finished_counts) may get
// before a scrape has them counted again (docs/operations.md#metrics).
const FinishedRefresh = 30 * time.Second

// finishedLock is the advisory lock the count of finished jobs runs under, so one
// process at a time counts them, whatever the number of replicas scraped.
const finishedLock int64 = 0x71756575655f666e // "queue_fn"

// NewCollector builds the collector; register it on a registry.
func NewCollector(pool *pgxpool.Pool, log *slog.Logger) *Collector {
	return &Collector{
		pool: pool, log: log, refreshAfter: FinishedRefresh,
		jobs: prometheus.NewDesc("taskweave_river_jobs", "River jobs by queue, kind and state.",
			[]string{"queue", "kind", "state"}, nil),
		oldest: prometheus.NewDesc("taskweave_river_oldest_available_job_age_seconds",
			"Age of the oldest available (runnable, not yet started) job by queue and kind; 0 when none is waiting.", []string{"queue", "kind"}, nil),
	}
}

// WithRefresh returns the collector counting the finished jobs again once their counts
// are older than d; 0 counts them at every scrape (tests).
func (c *Collector) WithRefresh(d time.Duration) *Collector {
	c.refreshAfter = d
	return c
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.oldest
}

// collectSQL reads the gauges: the unfinished jobs from river_job by the fetch index
// (states first), as many rows as the backlog, and the finished jobs of the last hour
// from queue_finished_counts, as many rows as (queue, kind, state)s; and how old those
// counts are (NULL before the first count). Read from river_job at each scrape, the
// finished jobs cost a read of the hour's, which grows with the job throughput (30 ms
// p99 at a million jobs a day against 18 at 10,000, docs/performance.md#the-worker-queue-gauges).
const collectSQL = `
	SELECT queue, kind, state::text, count(*),
	       coalesce(extract(epoch FROM now() - min(scheduled_at) FILTER (WHERE state = 'available')), 0)::float8,
	       NULL::float8
	FROM river_job
	WHERE state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
	GROUP BY queue, kind, state
	UNION ALL
	SELECT queue, kind, state, jobs, 0, NULL FROM queue_finished_counts
	UNION ALL
	SELECT '', '', '', 0, 0, extract(epoch FROM now() - refreshed_at)::float8 FROM queue_finished_counts_state`

// refreshSQL counts the jobs finished in the last hour, by River's (state, finalized_at)
// index, into queue_finished_counts, emptied first.
const refreshSQL = `
	INSERT INTO queue_finished_counts (queue, kind, state, jobs)
	SELECT queue, kind, state::text, count(*) FROM river_job
	WHERE state IN ('completed', 'cancelled', 'discarded') AND finalized_at > now() - interval '1 hour'
	GROUP BY queue, kind, state`

// Collect implements prometheus.Collector. A failed read is logged and exports nothing,
// so a database outage shows up as missing series rather than a failed scrape.
//
// Every (queue, kind) with a job that is unfinished or finished within the hour gets a
// series for every state and an age, 0 when it has no such job, so a panel of
// available or retryable jobs shows 0 rather than no data while the queue is empty.
//
// The unfinished jobs are counted at each scrape; the finished ones come from the
// counts of at most FinishedRefresh ago (plus the count's own time): a scrape finding
// them older starts a count in the background and exports the ones it read, and a
// scrape finding none (the first ever) counts first.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	counts, ages, age, err := c.read(ctx)
	if err == nil && (age == nil || *age >= c.refreshAfter.Seconds()) {
		if age == nil || c.refreshAfter == 0 {
			if err = c.refresh(ctx, true); err == nil {
				counts, ages, _, err = c.read(ctx)
			}
		} else if c.refreshing.CompareAndSwap(false, true) {
			go func() {
				defer c.refreshing.Store(false)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := c.refresh(ctx, false); err != nil {
					c.log.Warn("queue metrics: count finished jobs", "err", err)
				}
			}()
		}
	}
	if err != nil {
		c.log.Warn("queue metrics", "err", err)
		return
	}
	for k, byState := range counts {
		for _, state := range States {
			ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(byState[state]), k.queue, k.kind, state)
		}
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, ages[k], k.queue, k.kind)
	}
}

type queueKind struct{ queue, kind string }

// read runs collectSQL: the jobs by (queue, kind) and state, the oldest available job's
// age by (queue, kind), and how old the finished jobs' counts are in seconds (nil:
// never counted).
func (c *Collector) read(ctx context.Context) (map[queueKind]map[string]int64, map[queueKind]float64, *float64, error) {
	rows, err := c.pool.Query(ctx, collectSQL)
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	counts := map[queueKind]map[string]int64{}
	ages := map[queueKind]float64{}
	var countsAge *float64
	for rows.Next() {
		var k queueKind
		var state string
		var n int64
		var age float64
		var refreshed *float64
		if err := rows.Scan(&k.queue, &k.kind, &state, &n, &age, &refreshed); err != nil {
			return nil, nil, nil, err
		}
		if state == "" {
			countsAge = refreshed
			continue
		}
		if counts[k] == nil {
			counts[k] = map[string]int64{}
		}
		counts[k][state] = n
		if state == "available" {
			ages[k] = max(age, 0)
		}
	}
	return counts, ages, countsAge, rows.Err()
}

// refresh counts the finished jobs again (refreshSQL) under finishedLock, unless they
// were counted within refreshAfter, waiting for the lock when wait is set and otherwise
// leaving the count to the process holding it.
func (c *Collector) refresh(ctx context.Context, wait bool) error {
	tx, err := c.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	if wait {
		_, err = tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", finishedLock)
	} else {
		var locked bool
		if err = tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", finishedLock).Scan(&locked); err == nil && !locked {
			return nil
		}
	}
	if err != nil {
		return err
	}
	// Read after the lock, so a count committed by its last holder is seen.
	var fresh bool
	if err := tx.QueryRow(ctx, `SELECT coalesce(refreshed_at > now() - make_interval(secs => $1), false)
		FROM queue_finished_counts_state`, c.refreshAfter.Seconds()).Scan(&fresh); err != nil {
		return err
	}
	if fresh && c.refreshAfter > 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, "DELETE FROM queue_finished_counts"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, refreshSQL); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "UPDATE queue_finished_counts_state SET refreshed_at = now()"); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
