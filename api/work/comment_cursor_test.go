package work_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestCommentListCursorWalk: the comment list (newest first, by created_at and id) walked
// by cursor equals its page walk while still, and while comments are added and deleted
// between pages no comment comes twice and none that existed throughout is missed.
func TestCommentListCursorWalk(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	key := f.Create(t, map[string]any{"title": "Talk"})["key"].(string)
	path := f.Path("/issues/" + key + "/comments")
	post := func(body string) string {
		r := h.Do("POST", path, map[string]any{"body": body}, f.Member.Access)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		return r.JSON(t)["id"].(string)
	}
	for i := range 11 {
		post("c" + strconv.Itoa(i))
	}
	ids := func(m map[string]any) []string {
		var out []string
		for _, c := range m["content"].([]any) {
			out = append(out, c.(map[string]any)["id"].(string))
		}
		return out
	}
	walk := func(mutate func(step int)) []string {
		var out []string
		cursor := ""
		for step := 0; step < 50; step++ {
			r := h.Do("GET", path+"?size=3&cursor="+url.QueryEscape(cursor), nil, f.Member.Access)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			m := r.JSON(t)
			out = append(out, ids(m)...)
			if m["nextCursor"] == nil {
				require.Equal(t, true, m["last"])
				return out
			}
			cursor = m["nextCursor"].(string)
			if mutate != nil {
				mutate(step)
			}
		}
		t.Fatal("the walk did not end")
		return nil
	}
	var byPage []string
	for page := 0; ; page++ {
		m := h.Do("GET", path+"?size=3&page="+strconv.Itoa(page), nil, f.Member.Access).JSON(t)
		byPage = append(byPage, ids(m)...)
		if m["last"] == true {
			break
		}
	}
	require.Len(t, byPage, 11)
	require.Equal(t, byPage, walk(nil))

	unseen := byPage[9]
	got := walk(func(step int) {
		if step == 0 {
			post("newer, before the walk's position")
			r := h.Do("DELETE", path+"/"+unseen, nil, f.Member.Access)
			require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		}
	})
	seen := map[string]bool{}
	for _, id := range got {
		require.False(t, seen[id], "comment %s twice", id)
		seen[id] = true
	}
	for _, id := range byPage {
		require.Equal(t, id != unseen, seen[id], "comment %s", id)
	}
}
