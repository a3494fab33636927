package work_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// issueWalk pages through list (a query string) by cursor, size 4, calling between
// pages mutate(step); it returns the keys in the order handed out and checks the walk's
// page members on the way.
func issueWalk(t *testing.T, f *apitest.Project, query string, mutate func(step int)) []string {
	t.Helper()
	var keys []string
	cursor := ""
	for step := 0; ; step++ {
		require.Less(t, step, 100, "the walk ends")
		r := f.H.Do("GET", f.Path("/issues?size=4&"+query+"&cursor="+url.QueryEscape(cursor)), nil, f.Member.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		m := r.JSON(t)
		require.Equal(t, step == 0, m["first"])
		require.EqualValues(t, 0, m["number"])
		for _, it := range m["content"].([]any) {
			keys = append(keys, it.(map[string]any)["key"].(string))
		}
		next, ok := m["nextCursor"]
		require.True(t, ok, "nextCursor is always sent")
		if next == nil {
			require.Equal(t, true, m["last"])
			return keys
		}
		require.Equal(t, false, m["last"])
		require.Len(t, m["content"], 4, "only a full page has a next one")
		cursor = next.(string)
		if mutate != nil {
			mutate(step)
		}
	}
}

// issuePageWalk pages through list by page number, size 4.
func issuePageWalk(t *testing.T, f *apitest.Project, query string) []string {
	t.Helper()
	var keys []string
	for page := 0; ; page++ {
		r := f.H.Do("GET", f.Path("/issues?size=4&"+query+"&page="+strconv.Itoa(page)), nil, f.Member.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		m := r.JSON(t)
		for _, it := range m["content"].([]any) {
			keys = append(keys, it.(map[string]any)["key"].(string))
		}
		if m["last"] == true {
			require.Nil(t, m["nextCursor"], "the last page by number has no next cursor")
			return keys
		}
		require.NotNil(t, m["nextCursor"], "a page by number hands out the cursor after it")
	}
}

// TestIssueListCursorWalk: in every order of the issue list, unfiltered and filtered,
// a cursor walk hands out what the page walk does; and on a list that changes during
// the walk (issues created and deleted between pages) no issue comes twice and none
// that existed throughout is missed.
func TestIssueListCursorWalk(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	ctx := context.Background()
	for i := range 22 {
		prio := "HIGH"
		if i%3 == 0 {
			prio = "LOW"
		}
		f.Create(t, map[string]any{"title": "Walk " + strconv.Itoa(i), "priority": prio})
	}
	// Ties in every order's first key: the number decides among them.
	_, err := h.DB.Pool.Exec(ctx, `UPDATE issues SET due_date = current_date - (number % 4 + 1),
		updated_at = CASE WHEN number % 3 = 0 THEN timestamptz '2026-01-01 00:00:00Z' ELSE updated_at END
		WHERE project_id = $1`, f.ProjectID)
	require.NoError(t, err)

	for _, query := range []string{"", "sort=updatedAt", "overdue=true", "priority=HIGH", "priority=HIGH&sort=updatedAt"} {
		t.Run("order "+query, func(t *testing.T) {
			byPage := issuePageWalk(t, f, query)
			require.Greater(t, len(byPage), 8)
			require.Equal(t, byPage, issueWalk(t, f, query, nil), "a still list walks the same both ways")
		})
	}

	// A changing list: between pages issues are created and deleted, some already handed
	// out and some not yet.
	for _, query := range []string{"", "sort=updatedAt", "overdue=true", "priority=HIGH"} {
		before := issuePageWalk(t, f, query)
		deleted := map[string]bool{}
		del := func(key string) {
			r := h.Do("DELETE", f.Path("/issues/"+key), nil, f.Owner.Access)
			require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
			deleted[key] = true
		}
		got := issueWalk(t, f, query, func(step int) {
			switch step {
			case 0:
				del(before[1])             // handed out already
				del(before[len(before)-2]) // not yet
				for range 3 {
					iss := f.Create(t, map[string]any{"title": "Mid-walk", "priority": "HIGH"})
					_, err := h.DB.Pool.Exec(ctx, `UPDATE issues SET due_date = current_date - 2 WHERE id = $1`, iss["id"])
					require.NoError(t, err)
				}
			case 1:
				del(before[len(before)-3]) // not yet: 8 handed out, more than 9 in every list
			}
		})
		seen := map[string]bool{}
		for _, k := range got {
			require.False(t, seen[k], "%s handed out twice (%s)", k, query)
			seen[k] = true
		}
		for _, k := range before {
			if !deleted[k] {
				require.True(t, seen[k], "%s existed throughout but was missed (%s)", k, query)
			}
		}
		for _, k := range []string{before[len(before)-2], before[len(before)-3]} {
			require.False(t, seen[k], "%s was deleted before its page (%s)", k, query)
		}
	}
}

// TestIssueListCursorRefused: a cursor the server did not hand out for this list and
// order is 400 INVALID_CURSOR (tampered, garbage, another order, another project); a
// cursor with a page number is 400 INVALID_PAGE.
func TestIssueListCursorRefused(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	f := apitest.NewProject(t, h)
	other := apitest.NewProject(t, h)
	for range 3 {
		f.Create(t, map[string]any{"title": "c"})
		other.Create(t, map[string]any{"title": "c"})
	}
	first := func(p *apitest.Project, query string) string {
		r := h.Do("GET", p.Path("/issues?size=1&cursor=&"+query), nil, p.Owner.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return r.JSON(t)["nextCursor"].(string)
	}
	cursor := first(f, "")
	r := h.Do("GET", f.Path("/issues?size=1&cursor="+cursor), nil, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, f.Key+"-2", r.JSON(t)["content"].([]any)[0].(map[string]any)["key"])

	flipped := []byte(cursor)
	flipped[len(flipped)/2] ^= 1
	if flipped[len(flipped)/2] == '-' || flipped[len(flipped)/2] == '_' {
		flipped[len(flipped)/2] = 'A'
	}
	for name, c := range map[string]string{
		"tampered":      string(flipped),
		"cut":           cursor[:len(cursor)-3],
		"garbage":       "not-a-cursor",
		"base64 json":   "WyJpc3N1ZXMiLCIxIl0",
		"another order": first(f, "sort=updatedAt"),
		"another list":  first(other, ""),
	} {
		r := h.Do("GET", f.Path("/issues?size=1&cursor="+url.QueryEscape(c)), nil, f.Owner.Access)
		apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("INVALID_CURSOR"))
		_ = name
	}
	r = h.Do("GET", f.Path("/issues?size=1&page=1&cursor="+cursor), nil, f.Owner.Access)
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("INVALID_PAGE"))
}
