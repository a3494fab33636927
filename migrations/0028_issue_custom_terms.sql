-- The cf filter's equalities read a text array of terms instead of 0027's JSON object
-- (docs/performance.md#custom-fields-on-the-issue-row):
--   custom_terms: one term per value a cf filter compares for equality (every type but
--     TEXT), '<field id>=<value>' with the value as option id, true/false, the number
--     without trailing zeros (trim_scale) or the date as YYYY-MM-DD; sorted by field id.
--     NULL for an issue without such values.
-- Its GIN index (array_ops) answers "contains all these terms" exactly: the heap rows
-- it finds are not rechecked, where every row jsonb_path_ops found was (its keys are
-- hashes), and that recheck was half the cost of a filtered page.
ALTER TABLE issues ADD COLUMN custom_terms text[];

CREATE OR REPLACE FUNCTION issue_custom_sync(ids uuid[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    -- Lock first, read in the next statement (a fresh snapshot): see migration 0027.
    PERFORM 1 FROM issues WHERE id = ANY (ids) ORDER BY id FOR NO KEY UPDATE;
    UPDATE issues AS i SET custom_packed = c.packed, custom_terms = c.terms
    FROM (
        SELECT x.id,
            (SELECT string_agg(v.field_id::text || CASE
                    WHEN v.text_value IS NOT NULL THEN 'T' || octet_length(v.text_value) || ':' || v.text_value
                    WHEN v.number_value IS NOT NULL THEN 'N' || v.number_value::text || ';'
                    WHEN v.date_value IS NOT NULL THEN 'D' || (v.date_value - date '2000-01-01') || ';'
                    WHEN v.bool_value IS NOT NULL THEN CASE WHEN v.bool_value THEN 'B1' ELSE 'B0' END
                    ELSE 'O' || v.option_id::text || '-' END, '' ORDER BY v.field_id)
             FROM custom_field_values AS v WHERE v.issue_id = x.id) AS packed,
            (SELECT array_agg(v.field_id::text || '=' || coalesce(v.option_id::text, v.bool_value::text,
                    trim_scale(v.number_value)::text, to_char(v.date_value, 'YYYY-MM-DD')) ORDER BY v.field_id)
             FROM custom_field_values AS v WHERE v.issue_id = x.id AND v.text_value IS NULL) AS terms
        FROM (SELECT DISTINCT unnest(ids) AS id) AS x
    ) AS c
    WHERE i.id = c.id AND (i.custom_packed IS DISTINCT FROM c.packed OR i.custom_terms IS DISTINCT FROM c.terms);
END
$$;

DROP INDEX issues_custom_keys;
ALTER TABLE issues DROP COLUMN custom_keys;

SELECT issue_custom_sync(ARRAY(SELECT DISTINCT issue_id FROM custom_field_values));

CREATE INDEX issues_custom_terms ON issues USING gin (custom_terms);
