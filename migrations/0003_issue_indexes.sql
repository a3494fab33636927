-- Issue list support: indexes for the filters that had none, and a kept issue count per
-- project so an unfiltered page does not count the project's issues every time.

CREATE INDEX issues_project_type ON issues (project_id, type, number);
CREATE INDEX issues_project_priority ON issues (project_id, priority, number);

-- Kept by statement triggers on issues, so every writer (API, workers, bulk SQL) keeps
-- it exact; inserts already hold the project row's lock for the key, so the count row
-- adds no contention.
CREATE TABLE issue_counts (
    project_id uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    issues     integer NOT NULL DEFAULT 0 CHECK (issues >= 0)
);
INSERT INTO issue_counts (project_id, issues) SELECT project_id, count(*) FROM issues GROUP BY project_id;

CREATE FUNCTION issue_counts_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO issue_counts AS c (project_id, issues)
    SELECT project_id, count(*) FROM added GROUP BY project_id
    ON CONFLICT (project_id) DO UPDATE SET issues = c.issues + excluded.issues;
    RETURN NULL;
END
$$;

-- Only an UPDATE here: when a project is deleted, its issues and its count row go by
-- cascade, and an insert would point at the vanishing project.
CREATE FUNCTION issue_counts_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE issue_counts AS c SET issues = c.issues - r.n
    FROM (SELECT project_id, count(*) AS n FROM removed GROUP BY project_id) AS r
    WHERE c.project_id = r.project_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER issues_count_insert AFTER INSERT ON issues
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION issue_counts_added();
CREATE TRIGGER issues_count_delete AFTER DELETE ON issues
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION issue_counts_removed();
