-- Autovacuum sized for the tables written all day (docs/performance.md#fresh-rows).
--
-- The issue list finds a page's keys by index-only scans; a key on a heap page the
-- visibility map does not cover yet costs a visit of that page. Insert-driven vacuums
-- (Postgres 13+) set the map, but by default only after 1,000 + 20 % of the table's rows
-- were inserted: 200,000 issues on an instance of a million, weeks of writes. Here a
-- table is vacuumed after 1,000 + 1 % of its rows were inserted or changed, so the rows
-- the map misses stay a few thousand at any size, and its statistics follow as closely.
ALTER TABLE issues SET (
    autovacuum_vacuum_insert_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_analyze_threshold = 1000, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE custom_field_values SET (
    autovacuum_vacuum_insert_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0.01,
    autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE issue_filter_terms SET (
    autovacuum_vacuum_insert_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0.01,
    autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE issue_labels SET (
    autovacuum_vacuum_insert_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0.01,
    autovacuum_vacuum_scale_factor = 0.02);
-- Append-mostly, read newest first per issue (comments, activity) or per user
-- (notifications).
ALTER TABLE comments SET (
    autovacuum_vacuum_insert_threshold = 5000, autovacuum_vacuum_insert_scale_factor = 0.01,
    autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE issue_activities SET (
    autovacuum_vacuum_insert_threshold = 5000, autovacuum_vacuum_insert_scale_factor = 0.01,
    autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE notifications SET (
    autovacuum_vacuum_insert_threshold = 5000, autovacuum_vacuum_insert_scale_factor = 0.01,
    autovacuum_vacuum_scale_factor = 0.02);
-- One row per project, rewritten by every create: dead versions are pruned on the page,
-- and a vacuum every 1,000 changes keeps the table and its index from bloating.
ALTER TABLE issue_counts SET (autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_scale_factor = 0);
ALTER TABLE projects SET (autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_scale_factor = 0.01);
-- Every job row is inserted, updated when worked and deleted by River's cleaner; every
-- delivery is inserted and updated. A vacuum after 1 % of them changed keeps the fetch
-- and the list indexes free of dead entries.
ALTER TABLE river_job SET (
    autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_insert_threshold = 5000, autovacuum_vacuum_insert_scale_factor = 0.01,
    autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE webhook_deliveries SET (
    autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_insert_threshold = 5000, autovacuum_vacuum_insert_scale_factor = 0.01);
