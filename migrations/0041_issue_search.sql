-- Ranked full-text search over issues (docs/api-conventions.md#search).
--
-- issue_search holds one tsvector per issue: key and title weighted A, description B,
-- the comments (not deleted) C, each in the `simple` configuration and stemmed by
-- `english` and `german`, so a query parsed in the reader's language finds the stemmed
-- words and one in `simple` finds the words as written. It is a table of its own rather
-- than a column of issues: the list reads issue rows by the hundred, and a document of
-- every comment would widen each of them; and building it for existing issues writes
-- no issue row (no row lock, no dead tuple on the busiest table).
--
-- Kept current by triggers in the writing transaction (no nightly job): the write path
-- of every issue and comment, the API's, the importer's and the service desk's alike,
-- goes through them. docs/performance.md#search has their measured cost.
--
-- Project, number and key are copied from the issue, so a search without other filters
-- reads the documents alone (the list's keys are project and number; an exact key
-- ranks first).
CREATE TABLE issue_search (
    issue_id   uuid PRIMARY KEY,
    project_id uuid NOT NULL,
    number     integer NOT NULL,
    key        text NOT NULL,
    doc        tsvector NOT NULL
);
ALTER TABLE issue_search SET (autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_vacuum_insert_threshold = 1000,
    autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);

-- issue_search_text is one field's part of the document: the text in each configuration,
-- at one weight. The text is cut at 200,000 characters: a tsvector holds 1 MB and
-- positions up to 16,383, and the cut bounds what one write costs.
CREATE FUNCTION issue_search_text(body text, w "char") RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector('simple'::regconfig, left(body, 200000)), w)
        || setweight(to_tsvector('english'::regconfig, left(body, 200000)), w)
        || setweight(to_tsvector('german'::regconfig, left(body, 200000)), w)
$$;

-- issue_search_sync writes the documents of the issues ids names (an issue that is gone
-- loses its document). Like issue_custom_sync (0027), it locks the issues first, in a
-- statement of its own, and reads them and their comments in the next, which (READ
-- COMMITTED) takes a new snapshot: two transactions commenting on one issue at once then
-- write in turn, the second reading the first's comment, and neither document misses one.
--
-- The ids are joined as a set (unnest), not compared by = ANY: a statement writing a
-- hundred thousand issues syncs them in one call, and = ANY would test each row against
-- every id.
CREATE FUNCTION issue_search_sync(ids uuid[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM issues WHERE id IN (SELECT unnest(ids)) ORDER BY id FOR NO KEY UPDATE;
    INSERT INTO issue_search AS s (issue_id, project_id, number, key, doc)
    SELECT i.id, i.project_id, i.number, i.key, issue_search_text(i.key || ' ' || i.title, 'A')
        || issue_search_text(coalesce(i.description, ''), 'B')
        || issue_search_text(coalesce((SELECT string_agg(c.body, E'\n' ORDER BY c.created_at, c.id)
            FROM comments AS c WHERE c.issue_id = i.id AND c.deleted_at IS NULL), ''), 'C')
    FROM issues AS i WHERE i.id IN (SELECT unnest(ids))
    ON CONFLICT (issue_id) DO UPDATE SET project_id = excluded.project_id, number = excluded.number, key = excluded.key,
        doc = excluded.doc
        WHERE (s.project_id, s.number, s.key, s.doc) IS DISTINCT FROM (excluded.project_id, excluded.number, excluded.key, excluded.doc);
    DELETE FROM issue_search AS s WHERE s.issue_id IN (SELECT unnest(ids))
        AND NOT EXISTS (SELECT 1 FROM issues AS i WHERE i.id = s.issue_id);
END
$$;

-- Existing issues, before any trigger exists: the statement reads issues and comments
-- under a plain read lock (writes go on meanwhile) and writes only the new table.
INSERT INTO issue_search (issue_id, project_id, number, key, doc)
SELECT i.id, i.project_id, i.number, i.key, issue_search_text(i.key || ' ' || i.title, 'A')
    || issue_search_text(coalesce(i.description, ''), 'B')
    || issue_search_text(coalesce((SELECT string_agg(c.body, E'\n' ORDER BY c.created_at, c.id)
        FROM comments AS c WHERE c.issue_id = i.id AND c.deleted_at IS NULL), ''), 'C')
FROM issues AS i;

CREATE INDEX issue_search_doc ON issue_search USING gin (doc);
CREATE INDEX issue_search_project ON issue_search (project_id, number);

-- Issues: new rows per statement (an import or a bulk insert syncs once); a change of
-- key, title or description per row, and only when one of them changed (a status
-- change costs nothing); deletions per statement.
CREATE FUNCTION issue_search_issues_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM issue_search_sync(ARRAY(SELECT id FROM new_issues));
    ELSIF TG_OP = 'DELETE' THEN
        DELETE FROM issue_search WHERE issue_id IN (SELECT id FROM old_issues);
    END IF;
    RETURN NULL;
END
$$;
CREATE FUNCTION issue_search_issue_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM issue_search_sync(ARRAY[NEW.id]);
    RETURN NULL;
END
$$;
-- Comments: per statement, one sync per touched issue however many comments it wrote.
CREATE FUNCTION issue_search_comments_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM issue_search_sync(ARRAY(SELECT DISTINCT issue_id FROM old_comments));
    ELSE
        PERFORM issue_search_sync(ARRAY(SELECT DISTINCT issue_id FROM new_comments));
    END IF;
    RETURN NULL;
END
$$;

-- The triggers come last: creating them locks issues and comments against writes until
-- this migration commits, which is now a moment away rather than the backfill's length.
CREATE TRIGGER issue_search_insert AFTER INSERT ON issues
    REFERENCING NEW TABLE AS new_issues FOR EACH STATEMENT EXECUTE FUNCTION issue_search_issues_changed();
CREATE TRIGGER issue_search_update AFTER UPDATE OF key, title, description ON issues FOR EACH ROW
    WHEN (OLD.key IS DISTINCT FROM NEW.key OR OLD.title IS DISTINCT FROM NEW.title
        OR OLD.description IS DISTINCT FROM NEW.description)
    EXECUTE FUNCTION issue_search_issue_updated();
CREATE TRIGGER issue_search_delete AFTER DELETE ON issues
    REFERENCING OLD TABLE AS old_issues FOR EACH STATEMENT EXECUTE FUNCTION issue_search_issues_changed();
CREATE TRIGGER issue_search_comment_insert AFTER INSERT ON comments
    REFERENCING NEW TABLE AS new_comments FOR EACH STATEMENT EXECUTE FUNCTION issue_search_comments_changed();
CREATE TRIGGER issue_search_comment_update AFTER UPDATE ON comments
    REFERENCING NEW TABLE AS new_comments FOR EACH STATEMENT EXECUTE FUNCTION issue_search_comments_changed();
CREATE TRIGGER issue_search_comment_delete AFTER DELETE ON comments
    REFERENCING OLD TABLE AS old_comments FOR EACH STATEMENT EXECUTE FUNCTION issue_search_comments_changed();

-- Catch-up, under the triggers' locks (no write is under way now): what was written
-- while the backfill ran. Every write of an issue or a comment sets its updated_at;
-- an hour's margin covers a writing transaction that began before this one.
SELECT issue_search_sync(ARRAY(
    SELECT id FROM issues WHERE updated_at >= now() - interval '1 hour'
    UNION SELECT issue_id FROM comments WHERE updated_at >= now() - interval '1 hour'
    UNION SELECT i.id FROM issues AS i WHERE NOT EXISTS (SELECT 1 FROM issue_search AS s WHERE s.issue_id = i.id)));
DELETE FROM issue_search AS s WHERE NOT EXISTS (SELECT 1 FROM issues AS i WHERE i.id = s.issue_id);
