package work_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/customfield"
)

// cf is one cf query parameter, escaped.
func cf(field, value string) string { return "cf=" + url.QueryEscape(field+":"+value) }

func TestIssueListCustomFieldFilter(t *testing.T) {
	t.Parallel()
	f := cfFixtureOn(t, apitest.Shared(t))
	label := f.Label(t, "l")
	mk := func(title string, body map[string]any, values ...map[string]any) string {
		body["title"] = title
		body["customFieldValues"] = values
		return f.Create(t, body)["key"].(string)
	}
	A := mk("A", map[string]any{"priority": "HIGH", "labelIds": []string{label}}, cfv(f.text, "Login FAILS on Safari"),
		cfv(f.number, "1.50"), cfv(f.date, "2026-03-01"), cfv(f.dropdown, f.high), cfv(f.checkbox, "true"))
	B := mk("B", map[string]any{"priority": "LOW"}, cfv(f.text, "100% broken_page"), cfv(f.number, "2"),
		cfv(f.date, "2026-03-02"), cfv(f.dropdown, f.low), cfv(f.checkbox, "false"))
	C := mk("C", map[string]any{"priority": "HIGH"}, cfv(f.text, "login works"), cfv(f.number, "-2"), cfv(f.dropdown, f.high),
		cfv(f.checkbox, "true"))
	D := mk("D", map[string]any{"priority": "HIGH", "labelIds": []string{label}})
	other := cfFixtureOn(t, f.H)
	other.Create(t, map[string]any{"title": "Elsewhere", "customFieldValues": []any{cfv(other.text, "login"), cfv(other.checkbox, "true")}})

	for _, tc := range []struct {
		query string
		want  []string
	}{
		// TEXT: case-insensitive substring, % and _ literal.
		{cf(f.text, "login"), []string{A, C}},
		{cf(f.text, "SAFARI"), []string{A}},
		{cf(f.text, "100%"), []string{B}},
		{cf(f.text, "_"), []string{B}},
		{cf(f.text, "%"), []string{B}},
		{cf(f.text, "nothing"), []string{}},
		// NUMBER: exact, as numbers (1.5 = 1.50 = +01.5).
		{cf(f.number, "1.5"), []string{A}},
		{cf(f.number, "+01.50"), []string{A}},
		{cf(f.number, "-2"), []string{C}},
		{cf(f.number, "2"), []string{B}},
		{cf(f.number, "3"), []string{}},
		// DATE: exact.
		{cf(f.date, "2026-03-02"), []string{B}},
		{cf(f.date, "2026-03-03"), []string{}},
		// DROPDOWN: the option's id, either case.
		{cf(f.dropdown, f.high), []string{A, C}},
		{cf(f.dropdown, f.low), []string{B}},
		{cf(f.dropdown, uuid.NewString()), []string{}},
		// CHECKBOX: true, or false = not ticked (a stored false or no value).
		{cf(f.checkbox, "true"), []string{A, C}},
		{cf(f.checkbox, "false"), []string{B, D}},
		// Repeatable, AND with each other and with every other filter.
		{cf(f.dropdown, f.high) + "&" + cf(f.checkbox, "true"), []string{A, C}},
		{cf(f.dropdown, f.high) + "&" + cf(f.checkbox, "true") + "&" + cf(f.text, "safari"), []string{A}},
		{cf(f.dropdown, f.high) + "&" + cf(f.number, "-2") + "&" + cf(f.date, "2026-03-01"), []string{}},
		{cf(f.text, "login") + "&" + cf(f.text, "works"), []string{C}},
		{cf(f.checkbox, "false") + "&priority=HIGH", []string{D}},
		{cf(f.checkbox, "false") + "&labelId=" + label, []string{D}},
		{cf(f.dropdown, f.high) + "&q=a", []string{A}},
		{cf(f.dropdown, f.high) + "&sort=updatedAt", []string{C, A}},
		{cf(f.checkbox, "true") + "&assigneeMe=true", []string{}},
		// A field of no field of this project is ignored.
		{cf(uuid.NewString(), "x"), []string{A, B, C, D}},
		{cf(other.text, "login"), []string{A, B, C, D}},
		{cf(other.checkbox, "true") + "&" + cf(f.number, "2"), []string{B}},
	} {
		require.Equal(t, tc.want, listKeys(f.Project, t, f.Member.Access, tc.query), tc.query)
	}

	// Rows of a filtered list carry their values; the total counts the matches.
	r := f.H.Do("GET", f.Path("/issues?size=1&page=1&"+cf(f.dropdown, f.high)), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	m := r.JSON(t)
	require.EqualValues(t, 2, m["totalElements"])
	require.EqualValues(t, 2, m["totalPages"])
	row := m["content"].([]any)[0].(map[string]any)
	require.Equal(t, C, row["key"])
	require.Equal(t, map[string]string{"Notes": `"login works"`, "Estimate": "-2", "Review": "", "Severity": `"High"`, "Blocked": "true"},
		cfValues(t, row))
	m = f.H.Do("GET", f.Path("/issues?size=1&page=5&"+cf(f.dropdown, f.high)), nil, f.Viewer.Access).JSON(t)
	require.Equal(t, []any{}, m["content"])
	require.EqualValues(t, 2, m["totalElements"], "past the end the filtered total is still right")

	// Malformed filters are 400s: the parameter's shape, or a value the field's type
	// cannot match (naming the field).
	for _, q := range []string{"cf=abc", "cf=" + f.text, "cf=" + url.QueryEscape("not-a-uuid:x"), "cf=%00"} {
		apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues?"+q), nil, f.Owner.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_QUERY"))
	}
	for _, q := range []string{cf(f.number, "abc"), cf(f.number, ""), cf(f.date, "2026-3-1"), cf(f.checkbox, "yes"),
		cf(f.dropdown, "High"), cf(f.text, "")} {
		r := f.H.Do("GET", f.Path("/issues?"+q), nil, f.Owner.Access)
		apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("CUSTOM_FIELD_INVALID"))
	}
}

// TestIssueListQueryCountWithCustomFields proves the list's statements stay constant
// with custom fields and cf filters (whose fields' types the access statement reads),
// the same for a page of 1 and of 50 issues with five values each.
func TestIssueListQueryCountWithCustomFields(t *testing.T) {
	t.Parallel()
	h, counter := apitest.CountingHarness(t)
	f := cfFixtureOn(t, h)
	count := func(query string) int64 {
		before := counter.N.Load()
		r := h.Do("GET", f.Path("/issues?"+query), nil, f.Member.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return counter.N.Load() - before
	}
	create := func(i int) {
		f.Create(t, map[string]any{"title": "Issue " + strconv.Itoa(i), "customFieldValues": []any{cfv(f.text, "t"),
			cfv(f.number, strconv.Itoa(i)), cfv(f.date, "2026-01-01"), cfv(f.dropdown, f.high), cfv(f.checkbox, "true")}})
	}
	filters := "size=50&" + cf(f.dropdown, f.high) + "&" + cf(f.checkbox, "true") + "&" + cf(f.text, "t")
	create(0)
	one, oneFiltered := count("size=50"), count(filters)
	for i := 1; i < 50; i++ {
		create(i)
	}
	require.Equal(t, one, count("size=50"))
	require.Equal(t, oneFiltered, count(filters))
	require.Equal(t, int64(2), one, "project access with the credential's user row, the page with its total, labels and values")
	require.Equal(t, int64(2), oneFiltered, "the same two: the filters' field types come with the project access")
	m := h.Do("GET", f.Path("/issues?"+filters), nil, f.Member.Access).JSON(t)
	require.Len(t, m["content"], 50)
	for _, row := range m["content"].([]any) {
		require.Len(t, row.(map[string]any)["customFields"], 5)
	}
}

// TestIssueListCustomFieldFilterCeiling: a list takes at most customfield.MaxFilters cf
// terms (a VIEWER's ~150 TEXT terms once held a backend for the whole request deadline),
// a TEXT term's substring at most MaxFilterText characters, and a field's several terms
// are one condition that still means all of them.
func TestIssueListCustomFieldFilterCeiling(t *testing.T) {
	t.Parallel()
	f := cfFixtureOn(t, apitest.Shared(t))
	A := f.Create(t, map[string]any{"title": "A", "customFieldValues": []any{cfv(f.text, "Login FAILS on Safari 17"), cfv(f.checkbox, "true")}})["key"].(string)
	B := f.Create(t, map[string]any{"title": "B", "customFieldValues": []any{cfv(f.text, "login works on Firefox")}})["key"].(string)

	terms := func(n int, value func(i int) string) string {
		q := make([]string, n)
		for i := range q {
			q[i] = cf(f.text, value(i))
		}
		return strings.Join(q, "&")
	}
	same := func(int) string { return "login" }
	for _, n := range []int{21, 150} {
		r := f.H.Do("GET", f.Path("/issues?"+terms(n, same)), nil, f.Viewer.Access)
		apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("TOO_MANY_FILTERS"))
		require.Equal(t, map[string]any{"field": "cf", "max": "20"}, r.JSON(t)["details"], "%s", r.Body)
	}
	// 200 terms do not fit in a request head (8 KiB) at all: refused at the edge, over a
	// real connection, before any handler runs.
	resp, body := apitest.RawExchange(t, apitest.ServeEdge(t, f.H), "GET "+f.Path("/issues?"+terms(200, same))+" HTTP/1.1\r\nHost: x\r\n"+
		"Authorization: Bearer "+f.Viewer.Access+"\r\n\r\n")
	require.Equal(t, http.StatusRequestURITooLong, resp.StatusCode, "%v", body)
	require.Equal(t, "URI_TOO_LONG", body["code"])

	// Ten terms on one field (and twenty in all) are answered, quickly, and every
	// substring still has to match.
	words := []string{"login", "FAILS", "on", "safari", "17", "ogi", "ail", "Saf", "n F", "ari 1"}
	start := time.Now()
	require.Equal(t, []string{A}, listKeys(f.Project, t, f.Viewer.Access, terms(10, func(i int) string { return words[i] })))
	require.Less(t, time.Since(start), 2*time.Second, "ten terms are planned and probed in well under the request deadline")
	require.Equal(t, []string{A, B}, listKeys(f.Project, t, f.Viewer.Access, terms(20, same)))
	require.Equal(t, []string{B}, listKeys(f.Project, t, f.Viewer.Access, cf(f.text, "login")+"&"+cf(f.text, "firefox")+"&"+
		cf(f.checkbox, "false")+"&"+cf(f.checkbox, "false")))
	require.Equal(t, []string{}, listKeys(f.Project, t, f.Viewer.Access, cf(f.text, "safari")+"&"+cf(f.text, "firefox")))

	// A TEXT term is a search term: 255 characters at most.
	require.Equal(t, []string{}, listKeys(f.Project, t, f.Viewer.Access, cf(f.text, strings.Repeat("é", customfield.MaxFilterText))))
	apitest.RequireProblem(t, f.H.Do("GET", f.Path("/issues?"+cf(f.text, strings.Repeat("x", customfield.MaxFilterText+1))), nil, f.Viewer.Access),
		400, "BAD_REQUEST", apitest.Reason("CUSTOM_FIELD_INVALID"))
}
