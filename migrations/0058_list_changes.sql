-- Which transactions changed what a kept list depends on, so that an API process may
-- keep a list's numbers and prove them current with one index probe
-- (docs/performance.md#kept-lists).
--   filter_term_changes: one row per project and transaction that inserted, changed or
--     deleted a row of issue_filter_terms (a value written, an issue with values created
--     or deleted, a field or an option deleted): what a list of cf equalities depends on.
--   issue_changes: one row per project and transaction that inserted, updated or
--     deleted an issue: what the update order depends on.
--   xid is the transaction's id: a list read under a snapshot S is current for a later
--   statement when no row of its project has an xid at or above S's xmin that S does
--   not see.
--   list_change_horizon: its one row's horizon is the xmin below which the rows are
--     deleted; a list read under a snapshot whose xmin is below it is no longer proven
--     current. The worker's list_change_trim (hourly) moves horizon to the xmin it
--     recorded the run before (next_horizon) and deletes the rows below, in one
--     transaction, so a kept list is forgotten an hour or two after it was read.
CREATE TABLE filter_term_changes (
    project_id uuid NOT NULL,
    xid xid8 NOT NULL,
    PRIMARY KEY (project_id, xid)
);

CREATE TABLE issue_changes (
    project_id uuid NOT NULL,
    xid xid8 NOT NULL,
    PRIMARY KEY (project_id, xid)
);

CREATE TABLE list_change_horizon (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    horizon xid8 NOT NULL,
    next_horizon xid8 NOT NULL
);
INSERT INTO list_change_horizon (horizon, next_horizon)
VALUES (pg_snapshot_xmin(pg_current_snapshot()), pg_snapshot_xmin(pg_current_snapshot()));

-- One row per project and transaction: a later statement of the same transaction finds
-- its own row and writes nothing (no other transaction has that xid, so nothing waits).
-- Every trigger names the rows it saw changed_rows (the new rows of an insert or update,
-- the old of a delete; neither table's rows move between projects, so an update's new
-- rows name every project it touched), so each function is one static statement: a
-- dynamic one (EXECUTE) would be planned again on every write.
CREATE FUNCTION filter_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO filter_term_changes (project_id, xid)
    SELECT DISTINCT project_id, pg_current_xact_id() FROM changed_rows ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE FUNCTION issues_changed_for_lists() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO issue_changes (project_id, xid)
    SELECT DISTINCT project_id, pg_current_xact_id() FROM changed_rows ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER filter_terms_inserted AFTER INSERT ON issue_filter_terms
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION filter_terms_changed();
CREATE TRIGGER filter_terms_updated AFTER UPDATE ON issue_filter_terms
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION filter_terms_changed();
CREATE TRIGGER filter_terms_deleted AFTER DELETE ON issue_filter_terms
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION filter_terms_changed();
CREATE TRIGGER issues_inserted_for_lists AFTER INSERT ON issues
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION issues_changed_for_lists();
CREATE TRIGGER issues_updated_for_lists AFTER UPDATE ON issues
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION issues_changed_for_lists();
CREATE TRIGGER issues_deleted_for_lists AFTER DELETE ON issues
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION issues_changed_for_lists();
