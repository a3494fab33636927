-- The issue list finds a page's keys on issues alone before it joins anything
-- (domain/issue/list.go). These indexes let that step be an index-only scan in each
-- order, so a deep page costs the index entries it skips and nothing else. Both replace
-- an index of the same columns without the id, so a write maintains no more indexes
-- than before; the names stay, since other statements rely on them.
ALTER TABLE issues DROP CONSTRAINT issues_project_number_key;
ALTER TABLE issues ADD CONSTRAINT issues_project_number_key UNIQUE (project_id, number) INCLUDE (id);

DROP INDEX issues_project_updated;
CREATE INDEX issues_project_updated ON issues (project_id, updated_at DESC, number DESC) INCLUDE (id);

-- The cf filter reads the issues holding a value from these (migration 0024's, now
-- covering the issue id): index-only scans, and the option index leads with the field,
-- as the filter and the option's foreign key both name it.
DROP INDEX custom_field_values_number;
CREATE INDEX custom_field_values_number ON custom_field_values (field_id, number_value) INCLUDE (issue_id);
DROP INDEX custom_field_values_date;
CREATE INDEX custom_field_values_date ON custom_field_values (field_id, date_value) INCLUDE (issue_id)
    WHERE date_value IS NOT NULL;
DROP INDEX custom_field_values_bool;
CREATE INDEX custom_field_values_bool ON custom_field_values (field_id, bool_value) INCLUDE (issue_id)
    WHERE bool_value IS NOT NULL;
DROP INDEX custom_field_values_option;
CREATE INDEX custom_field_values_option ON custom_field_values (field_id, option_id) INCLUDE (issue_id)
    WHERE option_id IS NOT NULL;
