package work_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// searchKeys runs GET /search as token (headers: name, value pairs) and returns the
// hits' keys in order, checking each hit's shape.
func searchKeys(t *testing.T, f *apitest.Project, token, query string, headers ...string) []string {
	t.Helper()
	r := f.H.Do("GET", "/api/v1/search?"+query, nil, token, headers...)
	require.Equal(t, http.StatusOK, r.Status, "%s: %s", query, r.Body)
	m := r.JSON(t)
	keys := []string{}
	for _, it := range m["content"].([]any) {
		item := it.(map[string]any)
		apitest.RequireIssueShape(t, item)
		keys = append(keys, item["key"].(string))
	}
	require.EqualValues(t, len(keys), m["numberOfElements"])
	return keys
}

func q(s string) string { return "q=" + url.QueryEscape(s) }

// postComment posts a comment through the API and returns its id.
func postComment(t *testing.T, f *apitest.Project, key, body string) string {
	t.Helper()
	r := f.H.Do("POST", f.Path("/issues/"+key+"/comments"), map[string]any{"body": body}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)["id"].(string)
}

// TestSearchStemmingByLanguage: the reader's language picks the stemming of the query,
// and the document holds the English and German stems of every word.
func TestSearchStemmingByLanguage(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	run := f.Create(t, map[string]any{"title": "Deploy script must run twice"})["key"].(string)
	lauf := f.Create(t, map[string]any{"title": "Der letzte Lauf der Importe", "description": "Abbruch beim Speichern"})["key"].(string)
	f.Create(t, map[string]any{"title": "Unrelated chore"})

	en, de := []string{"Accept-Language", "en"}, []string{"Accept-Language", "de"}
	require.Equal(t, []string{run}, searchKeys(t, f, f.Owner.Access, q("running"), en...), "running finds run")
	require.Equal(t, []string{run}, searchKeys(t, f, f.Owner.Access, q("runs script"), en...))
	require.Equal(t, []string{lauf}, searchKeys(t, f, f.Owner.Access, q("Läufe"), de...), "Läufe finds Lauf")
	require.Equal(t, []string{lauf}, searchKeys(t, f, f.Owner.Access, q("Importen"), de...))
	require.Empty(t, searchKeys(t, f, f.Owner.Access, q("Läufe"), en...), "English does not stem Läufe")
	// The stored language wins over the header.
	apitest.SetLanguage(t, f.H, f.Owner, "de")
	require.Equal(t, []string{lauf}, searchKeys(t, f, f.Owner.Access, q("Läufe"), en...))
	// The issue list reads q the same way.
	require.Equal(t, []string{lauf}, listKeys(f, t, f.Owner.Access, q("Läufe")))
	require.Equal(t, []string{run}, listKeys(f, t, f.Member.Access, q("running")))
}

// TestSearchPhraseExclusionPrefix: quotes match the words in order, -word excludes,
// the last word is a prefix unless quoted or excluded.
func TestSearchPhraseExclusionPrefix(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	a := f.Create(t, map[string]any{"title": "Login page broken"})["key"].(string)
	b := f.Create(t, map[string]any{"title": "Page for login broken on Safari"})["key"].(string)
	c := f.Create(t, map[string]any{"title": "Checkout total wrong"})["key"].(string)
	tok := f.Owner.Access

	require.ElementsMatch(t, []string{a, b}, searchKeys(t, f, tok, q("login page")))
	require.Equal(t, []string{a}, searchKeys(t, f, tok, q(`"login page"`)), "phrase")
	require.Equal(t, []string{a}, searchKeys(t, f, tok, q("broken -safari")), "exclusion")
	require.Equal(t, []string{b}, searchKeys(t, f, tok, q("broken safari")))
	require.Equal(t, []string{c}, searchKeys(t, f, tok, q("checko")), "prefix of the last word")
	require.Equal(t, []string{c}, searchKeys(t, f, tok, q("total checko")), "prefix of the last word")
	require.Empty(t, searchKeys(t, f, tok, q("checko total")), "only the last word is a prefix")
	require.Empty(t, searchKeys(t, f, tok, q(`"checko"`)), "a quoted word is no prefix")
	require.ElementsMatch(t, []string{a, b}, searchKeys(t, f, tok, q("broken -saf")), "an excluded word is no prefix")
	// Operators alone or punctuation are no error: nothing matches.
	require.Empty(t, searchKeys(t, f, tok, q(`" - ' & | ! ( :*`)))
}

// TestSearchRankAndKey: a title match ranks above a comment match whatever the keys'
// order; sort= restores key order; an issue key as the text comes first.
func TestSearchRankAndKey(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	inComment := f.Create(t, map[string]any{"title": "First issue"})["key"].(string)
	postComment(t, f, inComment, "the zebra crossing is blocked")
	inDesc := f.Create(t, map[string]any{"title": "Second issue", "description": "a zebra in the description"})["key"].(string)
	inTitle := f.Create(t, map[string]any{"title": "Zebra in the title"})["key"].(string)

	want := []string{inTitle, inDesc, inComment}
	require.Equal(t, want, searchKeys(t, f, f.Owner.Access, q("zebra")))
	require.Equal(t, want, listKeys(f, t, f.Owner.Access, q("zebra")))
	require.Equal(t, []string{inComment, inDesc, inTitle}, listKeys(f, t, f.Owner.Access, q("zebra")+"&sort=createdAt"))
	past := f.H.Do("GET", f.Path("/issues?"+q("zebra")+"&size=1&page=7"), nil, f.Owner.Access).JSON(t)
	require.EqualValues(t, 3, past["totalElements"], "a page past the end still counts the matches")
	require.Empty(t, past["content"])
	// With another filter the issue rows are joined: still by rank.
	require.Equal(t, []string{inTitle, inDesc, inComment}, listKeys(f, t, f.Owner.Access, q("zebra")+"&statusId="+f.Todo.String()))
	f.Patch(t, inComment, map[string]any{"priority": "LOW"})
	require.Equal(t, []string{inComment, inTitle, inDesc}, listKeys(f, t, f.Owner.Access, q("zebra")+"&sort=updatedAt"))

	// Highlight: the page's rows carry the match, HTML-escaped, in <mark>.
	f.Patch(t, inTitle, map[string]any{"description": "zebra & <b>friends</b>"})
	r := f.H.Do("GET", f.Path("/issues?"+q("zebra")), nil, f.Owner.Access).JSON(t)
	hl := r["content"].([]any)[0].(map[string]any)["highlight"].(string)
	require.Contains(t, hl, "<mark>Zebra</mark>")
	require.Contains(t, hl, "<mark>zebra</mark> &amp;")
	require.NotContains(t, hl, "<b>", "the text is escaped (ts_headline drops the tags)")
	plain := f.H.Do("GET", f.Path("/issues"), nil, f.Owner.Access).JSON(t)
	require.NotContains(t, plain["content"].([]any)[0].(map[string]any), "highlight", "no highlight without q")

	// The key: the issue first, though another issue names it in its title.
	f.Create(t, map[string]any{"title": "Duplicate of " + inDesc})
	keys := searchKeys(t, f, f.Owner.Access, q(inDesc))
	require.Equal(t, inDesc, keys[0])
	require.Equal(t, inDesc, searchKeys(t, f, f.Owner.Access, q(strings.ToLower(inDesc)))[0])
	require.Equal(t, inDesc, listKeys(f, t, f.Owner.Access, q(inDesc))[0])
}

// TestSearchNeverLeaks: /search reads only the projects the caller can read, and
// projectKey cannot widen that.
func TestSearchNeverLeaks(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f, other := apitest.NewProject(t, h), apitest.NewProject(t, h)
	mine := f.Create(t, map[string]any{"title": "Quarterly kangaroo report"})["key"].(string)
	theirs := other.Create(t, map[string]any{"title": "Secret kangaroo plans"})["key"].(string)

	require.Equal(t, []string{mine}, searchKeys(t, f, f.Owner.Access, q("kangaroo")))
	require.Equal(t, []string{mine}, searchKeys(t, f, f.Viewer.Access, q("kangaroo")), "viewers search")
	require.Equal(t, []string{theirs}, searchKeys(t, f, other.Owner.Access, q("kangaroo")))
	require.Empty(t, searchKeys(t, f, f.Outsider.Access, q("kangaroo")))
	require.Empty(t, searchKeys(t, f, f.Owner.Access, q(theirs)), "not even by key")
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/search?"+q("kangaroo")+"&projectKey="+other.Key, nil, f.Owner.Access),
		http.StatusNotFound, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/search?"+q("kangaroo")+"&projectKey=NOPE", nil, f.Owner.Access),
		http.StatusNotFound, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
	require.Equal(t, []string{mine}, searchKeys(t, f, f.Owner.Access, q("kangaroo")+"&projectKey="+f.Key))

	// Both projects readable: both, and projectKey narrows.
	other.AddMember(t, f.Viewer, "VIEWER")
	require.ElementsMatch(t, []string{mine, theirs}, searchKeys(t, f, f.Viewer.Access, q("kangaroo")))
	require.Equal(t, []string{theirs}, searchKeys(t, f, f.Viewer.Access, q("kangaroo")+"&projectKey="+other.Key))
	// Paged: the Spring page shape, the total across pages.
	r := h.Do("GET", "/api/v1/search?"+q("kangaroo")+"&size=1&page=1", nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.EqualValues(t, 2, m["totalElements"])
	require.EqualValues(t, 2, m["totalPages"])
	require.Len(t, m["content"], 1)
	past := h.Do("GET", "/api/v1/search?"+q("kangaroo")+"&size=1&page=5", nil, f.Viewer.Access).JSON(t)
	require.EqualValues(t, 2, past["totalElements"])
	require.Empty(t, past["content"])
	require.Equal(t, http.StatusUnauthorized, h.Do("GET", "/api/v1/search?"+q("kangaroo"), nil, "").Status)
}

// TestSearchFollowsWrites: creating, editing and deleting comments and editing the
// issue change what matches, in the writing transaction.
func TestSearchFollowsWrites(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	key := f.Create(t, map[string]any{"title": "Plain title"})["key"].(string)
	id := postComment(t, f, key, "a giraffe walked by")
	tok := f.Owner.Access
	require.Equal(t, []string{key}, searchKeys(t, f, tok, q("giraffe")))

	r := f.H.Do("PUT", f.Path("/issues/"+key+"/comments/"+id), map[string]any{"body": "an elephant walked by"}, tok)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Empty(t, searchKeys(t, f, tok, q(`"giraffe"`)), "the edited comment no longer matches")
	require.Equal(t, []string{key}, searchKeys(t, f, tok, q("elephant")))

	r = f.H.Do("DELETE", f.Path("/issues/"+key+"/comments/"+id), nil, tok)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, searchKeys(t, f, tok, q(`"elephant"`)), "a deleted comment no longer matches")

	f.Patch(t, key, map[string]any{"title": "Walrus title", "description": "with a pelican"})
	require.Empty(t, searchKeys(t, f, tok, q(`"plain"`)))
	require.Equal(t, []string{key}, searchKeys(t, f, tok, q("walrus pelican")))

	require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.Path("/issues/"+key), nil, tok).Status)
	var n int
	require.NoError(t, f.H.DB.Pool.QueryRow(context.Background(), "SELECT count(*) FROM issue_search WHERE project_id = $1",
		f.ProjectID).Scan(&n))
	require.Zero(t, n, "a deleted issue's document goes with it")
}

// TestSearchLimits: an empty, too long or too wordy text is 400 and names its limit.
func TestSearchLimits(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	tok := f.Owner.Access
	for _, path := range []string{"/api/v1/search?", f.Path("/issues?")} {
		long := apitest.RequireProblem(t, f.H.Do("GET", path+q(strings.Repeat("a", 201)), nil, tok),
			http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("SEARCH_TOO_LONG"))
		require.Equal(t, map[string]any{"field": "q", "max": "200", "terms": "16"}, long["details"])
		apitest.RequireProblem(t, f.H.Do("GET", path+q(strings.Repeat("w ", 17)), nil, tok),
			http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("SEARCH_TOO_LONG"))
	}
	require.Equal(t, http.StatusOK, f.H.Do("GET", "/api/v1/search?"+q(strings.Repeat("w ", 16)), nil, tok).Status)
	require.Equal(t, http.StatusOK, f.H.Do("GET", "/api/v1/search?"+q(strings.Repeat("é", 200)), nil, tok).Status)
	for _, bad := range []string{"", "q=", "q=%20%20", "q=%00"} {
		apitest.RequireProblem(t, f.H.Do("GET", "/api/v1/search?"+bad, nil, tok),
			http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_QUERY"))
	}
}

// TestSearchTiersAndBoundedTotal: an issue holding the words in key, title or
// description ranks above one matched only through its comments, however often they
// say them; a page past those reaches the comment matches in rank order; an exclusion
// found in a comment excludes an issue whose title matches; a broad query's total is
// counted up to issue.SearchCountAhead past the page and marked inexact beyond.
func TestSearchTiersAndBoundedTotal(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	tok := f.Owner.Access
	chatty := f.Create(t, map[string]any{"title": "First issue"})["key"].(string)
	for range 3 {
		postComment(t, f, chatty, "zebra quagga zebra quagga zebra quagga")
	}
	once := f.Create(t, map[string]any{"title": "Second issue"})["key"].(string)
	postComment(t, f, once, "a zebra met a quagga")
	inDesc := f.Create(t, map[string]any{"title": "Third issue", "description": "zebra and quagga"})["key"].(string)
	inTitle := f.Create(t, map[string]any{"title": "Zebra quagga"})["key"].(string)
	excluded := f.Create(t, map[string]any{"title": "Zebra quagga ostrich-free"})["key"].(string)
	postComment(t, f, excluded, "an ostrich after all")

	want := []string{inTitle, excluded, inDesc, chatty, once}
	got := searchKeys(t, f, tok, q("zebra quagga"))
	require.ElementsMatch(t, want[:2], got[:2], "title matches first")
	require.Equal(t, want[2:], got[2:], "then the description, then the comments by rank")
	require.Equal(t, got, listKeys(f, t, tok, q("zebra quagga")))
	// Page by page, across the tiers: the same order, nothing twice.
	require.Equal(t, got, pagedKeys(t, f, tok, q("zebra quagga"), 6, 5))
	require.ElementsMatch(t, []string{inTitle, inDesc, chatty, once}, listKeys(f, t, tok, q("zebra -ostrich")))
	require.NotContains(t, searchKeys(t, f, tok, q("zebra -ostrich")), excluded, "a comment's word excludes a title match")
	require.NotContains(t, listKeys(f, t, tok, q("zebra -ostrich")), excluded)

	// 1,100 more matches: the total stops at offset + size + 1,000.
	_, err := f.H.DB.Pool.Exec(context.Background(), `
		WITH n AS (UPDATE projects SET issue_seq = 2000 WHERE id = $1 RETURNING key)
		INSERT INTO issues (project_id, number, key, title, status_id, reporter_id)
		SELECT $1, 100 + g, n.key || '-' || (100 + g), 'Bulk zebra ' || g, $2, $3 FROM n, generate_series(1, 1100) AS g`,
		f.ProjectID, f.Todo, f.Owner.ID)
	require.NoError(t, err)
	for _, path := range []string{f.Path("/issues?"), "/api/v1/search?projectKey=" + f.Key + "&"} {
		m := f.H.Do("GET", path+q("zebra")+"&size=50", nil, tok).JSON(t)
		require.EqualValues(t, 50+1000, m["totalElements"], path)
		require.Equal(t, false, m["totalElementsExact"], path)
		require.EqualValues(t, 21, m["totalPages"], path)
		require.Len(t, m["content"], 50)
		m = f.H.Do("GET", path+q("zebra")+"&size=50&page=20", nil, tok).JSON(t)
		require.EqualValues(t, 1105, m["totalElements"], "%s: counted from the page on, the total is exact", path)
		require.Equal(t, true, m["totalElementsExact"], path)
		require.Len(t, m["content"], 50)
		m = f.H.Do("GET", path+q("zebra")+"&size=50&page=40", nil, tok).JSON(t)
		require.EqualValues(t, 1105, m["totalElements"], "%s: a page past the end counts too", path)
		require.Empty(t, m["content"])
	}
}

// TestSearchCountsPrefixPastWholeWords: with the last word a prefix, a total whose
// whole-word matches alone pass the bound is not exact, and one whose whole-word
// matches do not is still counted with the prefix's completions (which the bound
// may then pass). Highlights come from the text that matched: the title for a head's
// match, the comments for an issue matched through them.
func TestSearchCountsPrefixPastWholeWords(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	tok := f.Owner.Access
	_, err := f.H.DB.Pool.Exec(context.Background(), `
		WITH n AS (UPDATE projects SET issue_seq = 3000 WHERE id = $1 RETURNING key),
		i AS (INSERT INTO issues (project_id, number, key, title, status_id, reporter_id)
			SELECT $1, g, n.key || '-' || g, CASE WHEN g <= 60 THEN 'Yak shaving remark ' || g ELSE 'Chore ' || g END, $2, $3
			FROM n, generate_series(1, 2300) AS g RETURNING id, number)
		INSERT INTO comments (issue_id, author_id, body)
		SELECT i.id, $3, CASE WHEN i.number <= 1200 THEN 'a yakety remark' ELSE 'walrus and yak again' END
		FROM i WHERE i.number > 60`,
		f.ProjectID, f.Todo, f.Owner.ID)
	require.NoError(t, err)
	for _, path := range []string{f.Path("/issues?"), "/api/v1/search?projectKey=" + f.Key + "&"} {
		// "yak": 60 heads and 1,100 whole-word matches through comments, past the bound.
		m := f.H.Do("GET", path+q("yak")+"&size=50", nil, tok).JSON(t)
		require.EqualValues(t, 1050, m["totalElements"], path)
		require.Equal(t, false, m["totalElementsExact"], path)
		// "shaving yak": 60 whole-word matches, no completion: exact.
		m = f.H.Do("GET", path+q("shaving yak")+"&size=50", nil, tok).JSON(t)
		require.EqualValues(t, 60, m["totalElements"], path)
		require.Equal(t, true, m["totalElementsExact"], path)
		hl := m["content"].([]any)[0].(map[string]any)["highlight"].(string)
		require.Contains(t, hl, "<mark>shaving</mark>", path)
		// "remark yak": 60 heads and whole-word matches, but the 1,140 "yakety" remarks
		// in comments complete the prefix, so the total passes the bound.
		m = f.H.Do("GET", path+q("remark yak")+"&size=50", nil, tok).JSON(t)
		require.EqualValues(t, 1050, m["totalElements"], "%s: completions are counted", path)
		require.Equal(t, false, m["totalElementsExact"], path)
		m = f.H.Do("GET", path+q("remark yak")+"&size=50&page=2", nil, tok).JSON(t)
		hl = m["content"].([]any)[0].(map[string]any)["highlight"].(string)
		require.Contains(t, hl, "<mark>yakety</mark>", "%s: a comment's match is highlighted from the comment", path)
		// "walrus yak": 1,100 whole-word matches, all through comments.
		m = f.H.Do("GET", path+q("walrus yak")+"&size=50&page=21", nil, tok).JSON(t)
		require.EqualValues(t, 1100, m["totalElements"], "%s: the last page counts exactly", path)
		require.Equal(t, true, m["totalElementsExact"], path)
	}
}

// TestSearchWholeWordsBeforeCompletions: with the last word typed as a prefix, the
// issues holding it as a whole word come before those holding only a longer word it
// begins, as in search-as-you-type elsewhere; both come before comment matches, and
// every page holds the next ones.
func TestSearchWholeWordsBeforeCompletions(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	tok := f.Owner.Access
	completion := f.Create(t, map[string]any{"title": "Gnusletter gnusletter gnusletter"})["key"].(string)
	whole := f.Create(t, map[string]any{"title": "Third issue", "description": "a gnu in the description"})["key"].(string)
	wholeTitle := f.Create(t, map[string]any{"title": "Gnu in the title"})["key"].(string)
	comment := f.Create(t, map[string]any{"title": "Fourth issue"})["key"].(string)
	postComment(t, f, comment, "the gnu again")
	want := []string{wholeTitle, whole, completion, comment}
	require.Equal(t, want, searchKeys(t, f, tok, q("gnu")))
	require.Equal(t, want, listKeys(f, t, tok, q("gnu")))
	require.Equal(t, want, pagedKeys(t, f, tok, q("gnu"), 5, 4))
	// Quoted, the word is whole: no completion.
	require.Equal(t, []string{wholeTitle, whole, comment}, listKeys(f, t, tok, q(`"gnu"`)))
}

// pagedKeys walks the list with query a row a page for pages pages, checking each
// page's exact total, and returns the keys in page order.
func pagedKeys(t *testing.T, f *apitest.Project, tok, query string, pages, total int) []string {
	t.Helper()
	var keys []string
	for page := range pages {
		m := f.H.Do("GET", f.Path("/issues?"+query+"&size=1&page="+strconv.Itoa(page)), nil, tok).JSON(t)
		for _, it := range m["content"].([]any) {
			keys = append(keys, it.(map[string]any)["key"].(string))
		}
		require.EqualValues(t, total, m["totalElements"], "page %d", page)
		require.Equal(t, true, m["totalElementsExact"], "page %d", page)
	}
	return keys
}
