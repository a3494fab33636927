-- Job operations (GET /admin/jobs?projectId=&issueId=&projectKey=&issueKey=) find a
-- project's or an issue's jobs by jsonb containment on River's args
-- (args @> '{"projectId": "…"}'). jsonb_path_ops indexes whole paths, so the index is a
-- fraction of River's own river_job_args_index (default jsonb_ops, keys and values
-- separately) and answers @> with one probe; it serves only @>, which is all we ask.
-- River's migrations (up to 007 in v0.41) create no index of this name.
CREATE INDEX IF NOT EXISTS taskweave_river_job_args_idx ON river_job USING gin (args jsonb_path_ops);
