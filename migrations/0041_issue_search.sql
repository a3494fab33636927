-- Ranked full-text search over issues (docs/api-conventions.md#search).
--
-- issue_search holds two tsvectors per issue, one per language a reader can have:
-- doc_en stemmed by `english`, doc_de by `german`, each with key and title weighted A
-- (also in the `simple` configuration: the words as written, stop words included),
-- description B, the comments (not deleted) C. A query parsed in the reader's language
-- and in `simple` is matched against that language's document alone: a document of all
-- three configurations at once was three times the bytes each match decompresses and
-- ranks (docs/performance.md#search). It is a table of its own rather
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
    doc_en     tsvector NOT NULL,
    doc_de     tsvector NOT NULL
);
ALTER TABLE issue_search SET (autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_vacuum_insert_threshold = 1000,
    autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);

-- issue_search_doc is an issue's document in configuration cfg. Each text is cut at
-- 200,000 characters: a tsvector holds 1 MB and positions up to 16,383, and the cut
-- bounds what one write costs.
CREATE FUNCTION issue_search_doc(cfg regconfig, head text, description text, comments text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector('simple'::regconfig, left(head, 200000)), 'A')
        || setweight(to_tsvector(cfg, left(head, 200000)), 'A')
        || setweight(to_tsvector(cfg, left(coalesce(description, ''), 200000)), 'B')
        || setweight(to_tsvector(cfg, left(coalesce(comments, ''), 200000)), 'C')
$$;

-- issue_search_rows are the rows of issue_search for the issues of ids.
CREATE FUNCTION issue_search_rows(ids uuid[]) RETURNS TABLE (issue_id uuid, project_id uuid, number integer, key text,
    doc_en tsvector, doc_de tsvector) LANGUAGE sql STABLE AS $$
    SELECT i.id, i.project_id, i.number, i.key,
        issue_search_doc('english', i.key || ' ' || i.title, i.description, c.body),
        issue_search_doc('german', i.key || ' ' || i.title, i.description, c.body)
    FROM issues AS i
    LEFT JOIN LATERAL (SELECT string_agg(c.body, E'\n' ORDER BY c.created_at, c.id) AS body
        FROM comments AS c WHERE c.issue_id = i.id AND c.deleted_at IS NULL) AS c ON true
    WHERE i.id IN (SELECT unnest(ids))
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
    INSERT INTO issue_search AS s (issue_id, project_id, number, key, doc_en, doc_de)
    SELECT * FROM issue_search_rows(ids)
    ON CONFLICT (issue_id) DO UPDATE SET project_id = excluded.project_id, number = excluded.number, key = excluded.key,
        doc_en = excluded.doc_en, doc_de = excluded.doc_de
        WHERE (s.project_id, s.number, s.key, s.doc_en, s.doc_de)
            IS DISTINCT FROM (excluded.project_id, excluded.number, excluded.key, excluded.doc_en, excluded.doc_de);
    DELETE FROM issue_search AS s WHERE s.issue_id IN (SELECT unnest(ids))
        AND NOT EXISTS (SELECT 1 FROM issues AS i WHERE i.id = s.issue_id);
END
$$;

-- Existing issues, before any trigger exists: the statement reads issues and comments
-- under a plain read lock (writes go on meanwhile) and writes only the new table.
INSERT INTO issue_search (issue_id, project_id, number, key, doc_en, doc_de) SELECT * FROM issue_search_rows(ARRAY(SELECT id FROM issues));

CREATE INDEX issue_search_doc_en ON issue_search USING gin (doc_en);
CREATE INDEX issue_search_doc_de ON issue_search USING gin (doc_de);
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
