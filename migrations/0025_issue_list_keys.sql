-- The issue list finds a page's keys on issues alone before it joins anything
-- (domain/issue/list.go). These indexes let that step be an index-only scan in each
-- order, so a deep page costs the index entries it skips and nothing else. Both replace
-- an index of the same columns without the id, so a write maintains no more indexes
-- than before; the names stay, since other statements rely on them.
ALTER TABLE issues DROP CONSTRAINT issues_project_number_key;
ALTER TABLE issues ADD CONSTRAINT issues_project_number_key UNIQUE (project_id, number) INCLUDE (id);

DROP INDEX issues_project_updated;
CREATE INDEX issues_project_updated ON issues (project_id, updated_at DESC, number DESC) INCLUDE (id);
