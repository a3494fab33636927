package issue

import (
	"context"
	"fmt"
	"html"
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

// searchConfig is the stemming configuration of a reply language (domain/locale) and
// its document of migration 0041: a query is parsed by it and by `simple` (the document
// holds key and title in both) and matched against that document.
func searchConfig(lang string) (cfg, doc string) {
	if lang == "de" {
		return "german", "x.doc_de"
	}
	return "english", "x.doc_en"
}

// search is a full-text query's SQL on issue_search aliased x (and, for the headline,
// the page's issue aliased i):
// match is the condition, rank the order (an exact key first, then ts_rank: weight A
// (key, title) over B (description) over C (comments)), headline the page row's
// snippet.
type search struct {
	match, rank, headline string
}

// newSearch renders q, in the reader's language lang, as websearch_to_tsquery does
// (quoted phrases, -exclusion, or), with the last word matched as a prefix while the
// user types (unless it is quoted or excluded). The tsquery is an uncorrelated
// sub-select: planned as an InitPlan, parsed once per statement.
func newSearch(ps *params, q, lang string) search {
	text := ps.add(q)
	cfg, doc := searchConfig(lang)
	prefix := !strings.HasSuffix(q, `"`)
	if fields := strings.Fields(q); len(fields) > 0 && strings.HasPrefix(fields[len(fields)-1], "-") {
		prefix = false
	}
	parse := func(cfg string) string {
		p := "websearch_to_tsquery('" + cfg + "', " + text + ")"
		if prefix {
			// The text form of a tsquery ends with its last lexeme, quoted; a prefix mark
			// after it is always a valid tsquery, and a text ending otherwise is unchanged.
			p = "regexp_replace(" + p + "::text, '''$', ''':*')::tsquery"
		}
		return p
	}
	// The two parses are often the same query (words no stemmer changes): then once.
	tsq := "(SELECT CASE WHEN l = s THEN l ELSE l || s END FROM (SELECT " + parse(cfg) + " AS l, " + parse("simple") + " AS s) AS p)"
	key := "false"
	if keyPattern.MatchString(q) { // an issue key as the whole text (ParseRef): found first
		key = "x.key = upper(" + text + ")"
	}
	return search{
		match: doc + " @@ " + tsq,
		rank:  "(" + key + ") DESC, ts_rank(" + doc + ", " + tsq + ") DESC",
		headline: "ts_headline('" + cfg + "', translate(left(i.title || E'\\n' || coalesce(i.description, '') || E'\\n' || coalesce((" +
			"SELECT string_agg(c.body, E'\\n' ORDER BY c.created_at, c.id) FROM (SELECT c.body, c.created_at, c.id FROM comments AS c " +
			"WHERE c.issue_id = i.id AND c.deleted_at IS NULL ORDER BY c.created_at, c.id LIMIT 20) AS c), ''), " +
			"5000), E'\\x01\\x02', ''), " + tsq + ", " + headlineOptions + ")",
	}
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

// Search is one page of the issues of the projects matching q, best match first (an
// exact key, then the rank, then the newest of its project), with their headline, and
// the total.
// Custom fields and versions are left out: the reply is a list of hits across
// projects. One statement; a page past the end counts in one more.
func (s *Service) Search(ctx context.Context, projects []SearchScope, q, lang string, offset, limit int) ([]*View, int, error) {
	if len(projects) == 0 {
		return []*View{}, 0, nil
	}
	ids := make([]uuid.UUID, len(projects))
	keys := make(map[uuid.UUID]string, len(projects))
	for i, p := range projects {
		ids[i], keys[p.ID] = p.ID, p.Key
	}
	var ps params
	scope := ps.add(store.UUIDs(ids))
	sr := newSearch(&ps, q, lang) // adds the text alone: the count reads ps[:2]
	matches := `FROM issue_search AS x WHERE x.project_id = ANY (` + scope + `) AND ` + sr.match
	off := ps.add(offset)
	query := `WITH k AS (
	SELECT x.issue_id, row_number() OVER w AS ord, count(*) OVER () AS total
	` + matches + `
	WINDOW w AS (ORDER BY ` + sr.rank + `, x.number DESC, x.issue_id)
	ORDER BY ord LIMIT ` + fmt.Sprint(limit) + ` OFFSET (SELECT ` + off + `::bigint)
)
SELECT ` + RowColumns + `, k.total, ` + sr.headline + `
FROM k JOIN issues AS i ON i.id = k.issue_id
` + RowJoins + `
ORDER BY k.ord`
	rows, err := s.pool.Query(ctx, query, ps...)
	if err != nil {
		return nil, 0, fmt.Errorf("search issues: %w", err)
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
			return nil, 0, fmt.Errorf("search issues: %w", err)
		}
		v.ProjectKey, v.Highlight = keys[v.ProjectID], Highlight(hl)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("search issues: %w", err)
	}
	if len(out) == 0 && offset > 0 {
		if err := s.pool.QueryRow(ctx, "SELECT count(*) "+matches, ps[:2]...).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("count search: %w", err)
		}
	}
	if out == nil {
		out = []*View{}
	}
	return out, total, nil
}
