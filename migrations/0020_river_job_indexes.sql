-- River's tables are River's. Migration 0018 replaced River's GIN indexes on
-- river_job.args and river_job.metadata with jsonb_path_ops ones; this puts back
-- exactly what River's own migration 002 creates (the default jsonb_ops class), so the
-- schema of River's tables is whatever the River release in go.mod makes, and a River
-- upgrade never has to reckon with our changes. Both uses (the /admin/jobs args filter
-- and River's metadata filter) are containment tests, which jsonb_ops answers as well.
-- See docs/operations.md#upgrading-river.
DROP INDEX river_job_args_index;
CREATE INDEX river_job_args_index ON river_job USING GIN (args);
DROP INDEX river_job_metadata_index;
CREATE INDEX river_job_metadata_index ON river_job USING GIN (metadata);
