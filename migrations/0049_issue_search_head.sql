-- The head of each issue's search document: key and title (weight A, also in `simple`)
-- and description (B), without the comments, one tsvector per reader language like
-- issue_search's (migration 0041). A ranked search reads these first
-- (docs/api-conventions.md#search): the issues holding every word of the query in key,
-- title or description rank above those matched through a comment, so a page of a broad
-- query is ranked among these narrow rows alone, without reading the full document of
-- every match (docs/performance.md#search).
--
-- A table of its own: its rows are a third of issue_search's, and a comment (the
-- commonest write of the text) does not change it.
CREATE TABLE issue_search_head (
    issue_id   uuid PRIMARY KEY,
    project_id uuid NOT NULL,
    number     integer NOT NULL,
    key        text NOT NULL,
    head_en    tsvector NOT NULL,
    head_de    tsvector NOT NULL
);
ALTER TABLE issue_search_head SET (autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_vacuum_insert_threshold = 1000,
    autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);

-- issue_search_head_sync writes the heads of the issues ids names (an issue that is gone
-- loses its head). It runs inside issue_search_sync's callers, after their lock of the
-- issues.
CREATE FUNCTION issue_search_head_sync(ids uuid[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO issue_search_head AS h (issue_id, project_id, number, key, head_en, head_de)
    SELECT i.id, i.project_id, i.number, i.key,
        issue_search_doc('english', i.key || ' ' || i.title, i.description, NULL),
        issue_search_doc('german', i.key || ' ' || i.title, i.description, NULL)
    FROM issues AS i WHERE i.id IN (SELECT unnest(ids))
    ON CONFLICT (issue_id) DO UPDATE SET project_id = excluded.project_id, number = excluded.number, key = excluded.key,
        head_en = excluded.head_en, head_de = excluded.head_de
        WHERE (h.project_id, h.number, h.key, h.head_en, h.head_de)
            IS DISTINCT FROM (excluded.project_id, excluded.number, excluded.key, excluded.head_en, excluded.head_de);
    DELETE FROM issue_search_head AS h WHERE h.issue_id IN (SELECT unnest(ids))
        AND NOT EXISTS (SELECT 1 FROM issues AS i WHERE i.id = h.issue_id);
END
$$;

-- Existing issues, under a plain read lock (writes go on meanwhile).
SELECT issue_search_head_sync(ARRAY(SELECT id FROM issues));

CREATE INDEX issue_search_head_en ON issue_search_head USING gin (head_en);
CREATE INDEX issue_search_head_de ON issue_search_head USING gin (head_de);

-- The issue triggers of 0041 now write the head beside the document. Replacing their
-- functions takes no lock of issues, and writers keep the old ones until this commits:
-- so writes are held from here (SHARE ROW EXCLUSIVE lets reads on) while what they
-- wrote during the backfill is caught up, a moment before the commit.
LOCK TABLE issues IN SHARE ROW EXCLUSIVE MODE;

CREATE OR REPLACE FUNCTION issue_search_issues_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM issue_search_sync(ARRAY(SELECT id FROM new_issues));
        PERFORM issue_search_head_sync(ARRAY(SELECT id FROM new_issues));
    ELSIF TG_OP = 'DELETE' THEN
        DELETE FROM issue_search WHERE issue_id IN (SELECT id FROM old_issues);
        DELETE FROM issue_search_head WHERE issue_id IN (SELECT id FROM old_issues);
    END IF;
    RETURN NULL;
END
$$;
CREATE OR REPLACE FUNCTION issue_search_issue_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM issue_search_sync(ARRAY[NEW.id]);
    PERFORM issue_search_head_sync(ARRAY[NEW.id]);
    RETURN NULL;
END
$$;

SELECT issue_search_head_sync(ARRAY(
    SELECT id FROM issues WHERE updated_at >= now() - interval '1 hour'
    UNION SELECT i.id FROM issues AS i WHERE NOT EXISTS (SELECT 1 FROM issue_search_head AS h WHERE h.issue_id = i.id)));
DELETE FROM issue_search_head AS h WHERE NOT EXISTS (SELECT 1 FROM issues AS i WHERE i.id = h.issue_id);
