-- A revision of the names a board shows that live outside the issue rows: label names and
-- colours, and users' display names. The board's response cache (api/board_cache.go)
-- compares it, with a fingerprint of the sprint's issue row versions, to decide whether
-- a cached board is still current. Issue rows need nothing here: every change to one
-- makes a new row version, which the fingerprint sees.
--
-- It is one row, bumped by statement-level triggers as the last thing a label or
-- display-name change does, so it orders those rare writes without touching the hot
-- path (issue writes never lock it).
CREATE TABLE board_names_revision (
    id  boolean PRIMARY KEY DEFAULT true CHECK (id),
    rev bigint NOT NULL
);
INSERT INTO board_names_revision (id, rev) VALUES (true, 0);

CREATE FUNCTION board_names_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE board_names_revision SET rev = rev + 1 WHERE id;
    RETURN NULL;
END
$$;

CREATE TRIGGER labels_board_names AFTER UPDATE OR DELETE ON labels
    FOR EACH STATEMENT EXECUTE FUNCTION board_names_bump();
CREATE TRIGGER users_board_names AFTER UPDATE OF display_name ON users
    FOR EACH STATEMENT EXECUTE FUNCTION board_names_bump();
