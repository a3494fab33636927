-- The matches of a list of cf equalities alone, in key order, as per-project bitmaps
-- (docs/performance.md#custom-fields-on-the-issue-row, "The term bitmaps").
--   issue_term_blocks: one row per (project, term, block of 1,024 issue numbers) with
--     a bit per number of the block: bit b of block k (leftmost first) is number
--     k * 1024 + b, set when that issue's row in issue_filter_terms (0029) holds the
--     term. A term is the narrow copy's term, bytes for bytes.
-- A filter of k terms ANDs its terms' blocks (bit_and of the blocks holding all k), its
-- total is the sum of their bit_count, and a page finds its block(s) by a running sum
-- and decodes them into numbers: a project of 100,000 issues has about 98 blocks per
-- term, so a page and its exact total cost the same at any offset and project size,
-- without reading a match's row. A block that no number holds any more is deleted.
CREATE TABLE issue_term_blocks (
    project_id uuid NOT NULL,
    term bytea NOT NULL,
    block int NOT NULL,
    bits bit(1024) NOT NULL,
    PRIMARY KEY (project_id, term, block)
);

-- issue_term_blocks_apply sets and clears the bits of (project, term, number) triples:
-- set[i] says whether to set or clear. Each block is written by one upsert, the blocks in
-- key order, so two transactions writing the same blocks lock them in the same order
-- and never deadlock over them.
CREATE FUNCTION issue_term_blocks_apply(projects uuid[], terms bytea[], numbers int[], sets bool[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r record;
    zero constant bit(1024) := B'0'::bit(1024);
    left_bits bit(1024);
BEGIN
    FOR r IN
        SELECT c.project_id, c.term, c.number >> 10 AS block,
            coalesce(bit_or(set_bit(zero, c.number & 1023, 1)) FILTER (WHERE c.set), zero) AS set_bits,
            coalesce(bit_or(set_bit(zero, c.number & 1023, 1)) FILTER (WHERE NOT c.set), zero) AS clear_bits
        FROM unnest(projects, terms, numbers, sets) AS c (project_id, term, number, set)
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3
    LOOP
        INSERT INTO issue_term_blocks AS b (project_id, term, block, bits)
        VALUES (r.project_id, r.term, r.block, r.set_bits)
        ON CONFLICT (project_id, term, block) DO UPDATE SET bits = (b.bits & ~r.clear_bits) | r.set_bits
        RETURNING b.bits INTO left_bits;
        IF left_bits = zero THEN
            DELETE FROM issue_term_blocks
            WHERE project_id = r.project_id AND term = r.term AND block = r.block;
        END IF;
    END LOOP;
END
$$;

-- Statement triggers on the narrow copy itself, with transition tables: whatever writes
-- it (the values' trigger of 0029, in the same transaction, or the cascade of an issue's
-- deletion, which removes its row without the values' trigger seeing its number), the
-- bits follow its rows: an inserted row's terms are set, a deleted row's cleared, an
-- updated row's difference applied. A rollback undoes both together.
CREATE FUNCTION issue_filter_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    p uuid[];
    t bytea[];
    n int[];
    s bool[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(r.project_id), array_agg(u.term), array_agg(r.number), array_agg(true)
        INTO p, t, n, s
        FROM new_rows AS r, unnest(r.terms) AS u (term);
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(r.project_id), array_agg(u.term), array_agg(r.number), array_agg(false)
        INTO p, t, n, s
        FROM old_rows AS r, unnest(r.terms) AS u (term);
    ELSE
        SELECT array_agg(d.project_id), array_agg(d.term), array_agg(d.number), array_agg(d.set)
        INTO p, t, n, s
        FROM (
            (SELECT r.project_id, u.term, r.number, true AS set FROM new_rows AS r, unnest(r.terms) AS u (term)
             EXCEPT
             SELECT r.project_id, u.term, r.number, true FROM old_rows AS r, unnest(r.terms) AS u (term))
            UNION ALL
            (SELECT r.project_id, u.term, r.number, false FROM old_rows AS r, unnest(r.terms) AS u (term)
             EXCEPT
             SELECT r.project_id, u.term, r.number, false FROM new_rows AS r, unnest(r.terms) AS u (term))
        ) AS d;
    END IF;
    IF p IS NOT NULL THEN
        PERFORM issue_term_blocks_apply(p, t, n, s);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER issue_filter_terms_insert AFTER INSERT ON issue_filter_terms
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION issue_filter_terms_changed();
CREATE TRIGGER issue_filter_terms_update AFTER UPDATE ON issue_filter_terms
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION issue_filter_terms_changed();
CREATE TRIGGER issue_filter_terms_delete AFTER DELETE ON issue_filter_terms
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION issue_filter_terms_changed();

-- The rows already there, in one pass (the narrow copy is locked against writes for it,
-- so no value written meanwhile is missed).
LOCK TABLE issue_filter_terms IN SHARE MODE;
INSERT INTO issue_term_blocks (project_id, term, block, bits)
SELECT t.project_id, u.term, t.number >> 10, bit_or(set_bit(B'0'::bit(1024), t.number & 1023, 1))
FROM issue_filter_terms AS t, unnest(t.terms) AS u (term)
GROUP BY 1, 2, 3;
