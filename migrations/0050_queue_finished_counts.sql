-- The queue gauges' finished jobs (taskweave_river_jobs for completed, cancelled and
-- discarded, domain/queue/stats.go): the jobs finished in the last hour per queue, kind
-- and state, counted from river_job by one process at most every 30 seconds and read by
-- every scrape. Counted at each scrape, they cost every scrape a read of the hour's
-- finished jobs, which grows with the job throughput (41,000 rows an hour at a million
-- jobs a day); the unfinished jobs are still counted at each scrape
-- (docs/performance.md#the-worker-queue-gauges, docs/operations.md#metrics).
--
-- Taskweave's own tables: River's (river_job) are only read.
CREATE TABLE queue_finished_counts (
    queue text NOT NULL,
    kind  text NOT NULL,
    state text NOT NULL,
    jobs  bigint NOT NULL,
    PRIMARY KEY (queue, kind, state)
);

-- One row: when the counts were last taken (NULL: never, the next scrape counts).
CREATE TABLE queue_finished_counts_state (
    only_row     boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    refreshed_at timestamptz
);
INSERT INTO queue_finished_counts_state DEFAULT VALUES;
