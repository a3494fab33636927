package issue

import (
	"context"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/taskweave/taskweave/store"
)

// Limits of a search text (docs/api-conventions.md#search): each term is one more
// lookup in the index, and the text is parsed three times per statement.
const (
	MaxQueryLength = 200
	MaxQueryTerms  = 16
)

// QueryTerms counts the words of a search text as the limit counts them: runs of
// letters and digits (a quoted phrase counts each of its words).
func QueryTerms(q string) int {
	return len(strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }))
}

// searchConfig is the stemming configuration of a reply language (domain/locale), its
// document of migration 0041 and its head of migration 0049: a query is parsed by it
// and by `simple` (both hold key and title in both) and matched against them.
func searchConfig(lang string) (cfg, doc, head string) {
	if lang == "de" {
		return "german", "doc_de", "head_de"
	}
	return "english", "doc_en", "head_en"
}

// SearchCountAhead is how far past a ranked search's page its total is counted
// (docs/api-conventions.md#search): each match counted is a document read, and a broad
// query matches tens of thousands. Up to offset + size + SearchCountAhead matches the
// total is exact; beyond, it is that bound and marked inexact (totalElementsExact).
const SearchCountAhead = store.PageCountAhead

// boundedCount is the statement counting the rows of matches (a FROM and WHERE) up to
// bound plus one: a count past bound says the total is not exact.
func boundedCount(matches string, bound int) string {
	return "SELECT count(*) FROM (SELECT 1 FROM " + matches + " LIMIT " + strconv.Itoa(bound+1) + ") AS c"
}

// searchCountLimit is the bound of the total of a ranked search's page at offset.
func searchCountLimit(offset, limit int) int { return offset + limit + SearchCountAhead }

// search is a full-text query's SQL on issue_search aliased x (and, for the headline,
// the page's issue aliased i):
// match is the condition, rank the order (an exact key first, then ts_rank: weight A
// (key, title) over B (description) over C (comments)), headline the page row's
// snippet.
//
// The ranked page of a search with no other filter is found by rankedKeys instead,
// from tsq, doc, head and key.
type search struct {
	match, rank, headline string
	headHeadline          string
	tsq, doc, head, key   string
	whole                 string
	excludes              bool
}

// newSearch renders q, in the reader's language lang, as websearch_to_tsquery does
// (quoted phrases, -exclusion, or), with the last word matched as a prefix while the
// user types (unless it is quoted or excluded). The tsquery is an uncorrelated
// sub-select: planned as an InitPlan, parsed once per statement.
func newSearch(ps *params, q, lang string) search {
	text := ps.add(q)
	cfg, docColumn, headColumn := searchConfig(lang)
	doc := "x." + docColumn
	prefix := !strings.HasSuffix(q, `"`)
	if fields := strings.Fields(q); len(fields) > 0 && strings.HasPrefix(fields[len(fields)-1], "-") {
		prefix = false
	}
	parse := func(cfg string, prefix bool) string {
		p := "websearch_to_tsquery('" + cfg + "', " + text + ")"
		if prefix {
			// The text form of a tsquery ends with its last lexeme, quoted; a prefix mark
			// after it is always a valid tsquery, and a text ending otherwise is unchanged.
			p = "regexp_replace(" + p + "::text, '''$', ''':*')::tsquery"
		}
		return p
	}
	// The two parses are often the same query (words no stemmer changes): then once.
	both := func(prefix bool) string {
		return "(SELECT CASE WHEN l = s THEN l ELSE l || s END FROM (SELECT " + parse(cfg, prefix) + " AS l, " + parse("simple", prefix) + " AS s) AS p)"
	}
	tsq, whole := both(prefix), ""
	if prefix {
		whole = both(false)
	}
	// The headline of the text searched: title, description and the first comments,
	// or of the head alone (title and description) for an issue whose head holds the
	// query, half the text to parse.
	headline := func(comments bool) string {
		text := "i.title || E'\\n' || coalesce(i.description, '')"
		if comments {
			text += " || E'\\n' || coalesce((" +
				"SELECT string_agg(c.body, E'\\n' ORDER BY c.created_at, c.id) FROM (SELECT c.body, c.created_at, c.id FROM comments AS c " +
				"WHERE c.issue_id = i.id AND c.deleted_at IS NULL ORDER BY c.created_at, c.id LIMIT 20) AS c), '')"
		}
		return "ts_headline('" + cfg + "', translate(left(" + text + ", 5000), E'\\x01\\x02', ''), " + tsq + ", " + headlineOptions + ")"
	}
	key := "false"
	if keyPattern.MatchString(q) { // an issue key as the whole text (ParseRef): found first
		key = "x.key = upper(" + text + ")"
	}
	return search{
		tsq: tsq, whole: whole, doc: docColumn, head: headColumn, key: key, excludes: strings.Contains(q, "-"),
		match:        doc + " @@ " + tsq,
		rank:         "(" + key + ") DESC, ts_rank(" + doc + ", " + tsq + ") DESC",
		headline:     headline(true),
		headHeadline: headline(false),
	}
}

// rankedKeys is the SQL of the page of a ranked search over the documents in scope (a
// condition on their alias x), limit rows from the offset parameter off: issue_id,
// number, ord (1, 2, … in page order), total and tier. The total is the matches
// counted up to searchCountLimit plus one (a total past it is not exact): the heads'
// matches when they are more than that already (every head's match is a document's
// match); the heads and the others when the page reached past the heads and so read
// every other match anyway; else the documents' (their index lists every match before
// the count can stop), the whole words' first.
//
// The order (docs/api-conventions.md#search): an exact key first; then the issues
// holding the query in key, title and description (the heads of migration 0049), by
// ts_rank over the head (title A over description B): first those holding the last
// word whole (tier 0), then those holding only a longer word it begins (tier 1, when
// the last word is a prefix); then the issues matched only through their comments
// (tier 2), by ts_rank over the whole document; ties by tiebreak (over x). A page
// within the heads reads the heads alone, narrow rows, however many issues match
// through their comments: ranking the whole document of every match of a broad query
// was the cost of search (docs/performance.md#search). A page past the heads ranks
// every other match as before. A query with an exclusion (-word) checks a head's
// match against the whole document too: a word a comment holds excludes the issue.
func (sr search) rankedKeys(scope, off string, limit int, tiebreak string) string {
	size, bound := strconv.Itoa(limit), strconv.Itoa(limit+SearchCountAhead)
	// With the last word a prefix, whole words are matched first: an index's partial
	// match reads every entry of every word the prefix begins and skips nothing, some
	// times what the whole words cost (docs/performance.md#search). The heads holding
	// only a completion (tier 1) are read when the page reaches past the others.
	first, completions := sr.tsq, "false" // tier 0's query; whether tier 1 exists
	if sr.whole != "" {
		first, completions = sr.whole, "true"
	}
	excluded := ""
	if sr.excludes {
		excluded = "\n\t\tAND EXISTS (SELECT 1 FROM issue_search AS d WHERE d.issue_id = x.issue_id AND d." + sr.doc + " @@ " + sr.tsq + ")"
	}
	heads := func(tsq string) string {
		return `SELECT x.issue_id, x.number, ` + sr.key + ` AS exact, ts_rank(x.` + sr.head + `, ` + sr.tsq + `) AS r
		FROM issue_search_head AS x
		WHERE ` + scope + ` AND x.` + sr.head + ` @@ ` + tsq + excluded
	}
	// The documents matching tsq, counted up to the bound plus one.
	count := func(tsq string) string {
		return `(SELECT count(*) FROM (SELECT 1 FROM issue_search AS x WHERE ` + scope + ` AND x.` + sr.doc + ` @@ ` + tsq + `
			LIMIT (SELECT skip + ` + bound + ` + 1 FROM o)) AS c)`
	}
	// Past the heads, the total is the documents' count: the whole words' first, as
	// they are a subset of the prefix's matches; when they pass the bound, so does
	// the total.
	counted := count(sr.tsq)
	if sr.whole != "" {
		counted = `CASE WHEN ` + count(sr.whole) + ` > (SELECT skip + ` + bound + ` FROM o) THEN (SELECT skip + ` + bound + ` + 1 FROM o)
			ELSE ` + count(sr.tsq) + ` END`
	}
	return `WITH h AS MATERIALIZED (
		` + heads(first) + `
	), o AS (SELECT (SELECT ` + off + `::int) AS skip, (SELECT count(*) FROM h) AS whole),
	p AS MATERIALIZED (
		` + heads(sr.tsq) + `
			AND ` + completions + ` AND (SELECT whole < skip + ` + size + ` FROM o)
			AND NOT EXISTS (SELECT 1 FROM h WHERE h.issue_id = x.issue_id)
	), n AS (SELECT skip, whole, whole + (SELECT count(*) FROM p) AS heads FROM o),
	t AS MATERIALIZED (
		SELECT x.issue_id, x.number, 2 AS tier, false AS exact, ts_rank(x.` + sr.doc + `, ` + sr.tsq + `) AS r
		FROM issue_search AS x
		WHERE (SELECT heads < skip + ` + size + ` FROM n) AND ` + scope + ` AND x.` + sr.doc + ` @@ ` + sr.tsq + `
			AND NOT EXISTS (SELECT 1 FROM h WHERE h.issue_id = x.issue_id)
			AND NOT EXISTS (SELECT 1 FROM p WHERE p.issue_id = x.issue_id)
	),
	r AS (SELECT x.issue_id, x.number, 0 AS tier, x.exact, x.r FROM h AS x
		UNION ALL SELECT x.issue_id, x.number, 1, x.exact, x.r FROM p AS x
		UNION ALL SELECT * FROM t)
	SELECT x.issue_id, x.number, row_number() OVER (ORDER BY x.tier, x.exact DESC, x.r DESC, ` + tiebreak + `) AS ord,
		CASE WHEN (SELECT heads > skip + ` + bound + ` FROM n) THEN (SELECT heads FROM n)
		WHEN (SELECT heads < skip + ` + size + ` FROM n) THEN (SELECT heads FROM n) + (SELECT count(*) FROM t)
		ELSE ` + counted + ` END AS total, x.tier
	FROM (SELECT x.* FROM r AS x ORDER BY x.tier, x.exact DESC, x.r DESC, ` + tiebreak + `
		LIMIT ` + size + ` OFFSET (SELECT skip FROM o)) AS x`
}

// tieredHeadline is the headline of a ranked page's row of tier (rankedKeys): of the
// head alone when the head holds the query (tiers 0 and 1), else of the whole text.
func (sr search) tieredHeadline(tier string) string {
	return "CASE WHEN " + tier + " < 2 THEN " + sr.headHeadline + " ELSE " + sr.headline + " END"
}

// headlineOptions mark a match with the control characters 1 and 2 (stripped from the
// text first), which Highlight turns into <mark> around HTML-escaped text.
const headlineOptions = `E'StartSel=\x01, StopSel=\x02, MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "'`

// Highlight turns a headline into HTML: the text escaped, each match in <mark>; nil
// when nothing in the text it read matched (a match beyond its first 5,000 characters
// or past the first 20 comments).
func Highlight(h pgtype.Text) *string {
	if !h.Valid || !strings.ContainsRune(h.String, '\x01') {
		return nil
	}
	s := html.EscapeString(h.String)
	s = strings.NewReplacer("\x01", "<mark>", "\x02", "</mark>").Replace(s)
	return &s
}

// SearchScope is one project a search reads.
type SearchScope struct {
	ID  uuid.UUID
	Key string
}

// Search is one page of the issues of the projects matching q in rank order
// (rankedKeys: an exact key, the heads' matches, the others; ties the newest of its
// project first), with their headline, the total counted up to SearchCountAhead past
// the page, and whether it is exact.
// Custom fields and versions are left out: the reply is a list of hits across
// projects. One statement; a page past the end counts in one more.
func (s *Service) Search(ctx context.Context, projects []SearchScope, q, lang string, offset, limit int) ([]*View, int, bool, error) {
	if len(projects) == 0 {
		return []*View{}, 0, true, nil
	}
	ids := make([]uuid.UUID, len(projects))
	keys := make(map[uuid.UUID]string, len(projects))
	for i, p := range projects {
		ids[i], keys[p.ID] = p.ID, p.Key
	}
	var ps params
	scope := "x.project_id = ANY (" + ps.add(store.UUIDs(ids)) + ")"
	sr := newSearch(&ps, q, lang) // adds the text alone: the count reads ps[:2]
	countCap := searchCountLimit(offset, limit)
	off := ps.add(min(offset, math.MaxInt32-limit-SearchCountAhead-1))
	query := `WITH k AS (
	` + sr.rankedKeys(scope, off, limit, "x.number DESC, x.issue_id") + `
)
SELECT ` + RowColumns + `, k.total, ` + sr.tieredHeadline("k.tier") + `
FROM k JOIN issues AS i ON i.id = k.issue_id
` + RowJoins + `
ORDER BY k.ord`
	rows, err := s.pool.Query(ctx, query, ps...)
	if err != nil {
		return nil, 0, false, fmt.Errorf("search issues: %w", err)
	}
	defer rows.Close()
	var (
		out   []*View
		total int
		sc    RowScan
		hl    pgtype.Text
	)
	for rows.Next() {
		v := &View{}
		if err := sc.Scan(rows, v, &total, &hl); err != nil {
			return nil, 0, false, fmt.Errorf("search issues: %w", err)
		}
		v.ProjectKey, v.Highlight = keys[v.ProjectID], Highlight(hl)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, false, fmt.Errorf("search issues: %w", err)
	}
	if len(out) == 0 && offset > 0 {
		count := boundedCount("issue_search AS x WHERE "+scope+" AND "+sr.match, countCap)
		if err := s.pool.QueryRow(ctx, count, ps[:2]...).Scan(&total); err != nil {
			return nil, 0, false, fmt.Errorf("count search: %w", err)
		}
	}
	if out == nil {
		out = []*View{}
	}
	if total > countCap {
		return out, countCap, false, nil
	}
	return out, total, true, nil
}
