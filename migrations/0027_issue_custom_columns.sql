-- Each issue row carries a copy of its custom field values, kept by triggers from
-- custom_field_values (which stays the source of truth: validation, foreign keys and
-- cascades work on it). See docs/performance.md#custom-fields-on-the-issue-row.
--   custom_packed: the values in the list's packed text (domain/issue/list.go,
--     parseValues), options by id only (their labels come with the field definitions,
--     so renaming an option rewrites no issue). The list reads it with the row instead
--     of a lookup of the values per listed issue.
--   custom_keys: a JSON object of the values a cf filter compares for equality (every
--     type but TEXT: option id, number, date as YYYY-MM-DD, true/false), keyed by field
--     id; one GIN index answers any number of such filters at once.
-- Both are NULL for an issue without values.
ALTER TABLE issues ADD COLUMN custom_packed text, ADD COLUMN custom_keys jsonb;

-- issue_custom_sync recomputes both columns of the issues ids names, writing only rows
-- whose copy changed. The packed text is ordered by field id so it is deterministic.
--
-- It locks the issues first, in a statement of its own, and reads their values in the
-- next, which (READ COMMITTED) takes a new snapshot: a transaction still writing values
-- of one of these issues holds its row lock (every API write of values locks the issue
-- first), so this waits for it and then reads what it committed. Read in the same
-- statement as the update, the values would come from a snapshot taken before the
-- wait, and the copy would miss them (say, a field deleted while another field of one
-- of its issues was being set).
CREATE FUNCTION issue_custom_sync(ids uuid[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM issues WHERE id = ANY (ids) ORDER BY id FOR NO KEY UPDATE;
    UPDATE issues AS i SET custom_packed = c.packed, custom_keys = c.keys
    FROM (
        SELECT x.id,
            (SELECT string_agg(v.field_id::text || CASE
                    WHEN v.text_value IS NOT NULL THEN 'T' || octet_length(v.text_value) || ':' || v.text_value
                    WHEN v.number_value IS NOT NULL THEN 'N' || v.number_value::text || ';'
                    WHEN v.date_value IS NOT NULL THEN 'D' || (v.date_value - date '2000-01-01') || ';'
                    WHEN v.bool_value IS NOT NULL THEN CASE WHEN v.bool_value THEN 'B1' ELSE 'B0' END
                    ELSE 'O' || v.option_id::text || '-' END, '' ORDER BY v.field_id)
             FROM custom_field_values AS v WHERE v.issue_id = x.id) AS packed,
            (SELECT jsonb_object_agg(v.field_id::text, coalesce(to_jsonb(v.option_id), to_jsonb(v.bool_value),
                    to_jsonb(v.number_value), to_jsonb(v.date_value)))
             FROM custom_field_values AS v WHERE v.issue_id = x.id AND v.text_value IS NULL) AS keys
        FROM (SELECT DISTINCT unnest(ids) AS id) AS x
    ) AS c
    WHERE i.id = c.id AND (i.custom_packed IS DISTINCT FROM c.packed OR i.custom_keys IS DISTINCT FROM c.keys);
END
$$;

-- Statement triggers with transition tables: one recomputation per statement, however
-- many values it wrote (an option's or a field's deletion cascades here too). A
-- transition table is visible only to the trigger function's own statements, so each
-- passes the ids on.
CREATE FUNCTION custom_values_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM issue_custom_sync(ARRAY(SELECT issue_id FROM old_values));
    ELSE
        PERFORM issue_custom_sync(ARRAY(SELECT issue_id FROM new_values));
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER custom_values_insert AFTER INSERT ON custom_field_values
    REFERENCING NEW TABLE AS new_values FOR EACH STATEMENT EXECUTE FUNCTION custom_values_changed();
CREATE TRIGGER custom_values_update AFTER UPDATE ON custom_field_values
    REFERENCING NEW TABLE AS new_values FOR EACH STATEMENT EXECUTE FUNCTION custom_values_changed();
CREATE TRIGGER custom_values_delete AFTER DELETE ON custom_field_values
    REFERENCING OLD TABLE AS old_values FOR EACH STATEMENT EXECUTE FUNCTION custom_values_changed();

SELECT issue_custom_sync(ARRAY(SELECT DISTINCT issue_id FROM custom_field_values));

CREATE INDEX issues_custom_keys ON issues USING gin (custom_keys jsonb_path_ops);

-- The cf filter's equality conditions read issues_custom_keys now; these value indexes
-- served only them. The option index stays: the option's foreign key cascades through
-- it, and the text index answers the TEXT filter's substring search.
DROP INDEX custom_field_values_number;
DROP INDEX custom_field_values_date;
DROP INDEX custom_field_values_bool;
