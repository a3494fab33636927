package work_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestBoardCacheFollowsEveryChange reads the board through two API servers on one
// database (two replicas, each with its own board cache) after every kind of change a
// board shows, including one made in SQL behind the API's back: each read must show the
// change at once, so no cached board ever outlives the state it was built from.
func TestBoardCacheFollowsEveryChange(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	replica := apitest.New(t, apitest.Options{DB: h.DB})
	f := apitest.NewSprintProject(t, h)
	sp := f.NewSprint(t, map[string]any{"name": "Cached"})["id"].(string)
	l := f.Label(t, "ui")
	a := f.Create(t, map[string]any{"title": "a", "storyPoints": 3, "sprintId": sp, "labelIds": []string{l}})
	b := f.Create(t, map[string]any{"title": "b", "storyPoints": 5, "sprintId": sp})
	f.Start(t, sp)

	// issue finds an issue by key on the board read through srv, nil when absent.
	issue := func(srv *apitest.Harness, key string) map[string]any {
		t.Helper()
		r := srv.Do("GET", f.Path("/board"), nil, f.Viewer.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		for _, c := range r.JSON(t)["columns"].([]any) {
			for _, i := range c.(map[string]any)["issues"].([]any) {
				if m := i.(map[string]any); m["key"] == key {
					return m
				}
			}
		}
		return nil
	}
	both := func(check func(srv *apitest.Harness)) {
		t.Helper()
		check(h)
		check(replica)
		check(h) // a second read of each is served from the cache it just filled
		check(replica)
	}
	aKey, bKey := a["key"].(string), b["key"].(string)
	both(func(srv *apitest.Harness) { require.Equal(t, "b", issue(srv, bKey)["title"]) })

	f.Patch(t, bKey, map[string]any{"title": "b2"})
	both(func(srv *apitest.Harness) { require.Equal(t, "b2", issue(srv, bKey)["title"]) })

	f.Patch(t, bKey, map[string]any{"statusId": f.Done})
	both(func(srv *apitest.Harness) {
		r := srv.Do("GET", f.Path("/board"), nil, f.Viewer.Access).JSON(t)
		require.EqualValues(t, 5, r["sprint"].(map[string]any)["completedPoints"])
	})

	// A label rename and a display-name change touch no issue row.
	require.Equal(t, http.StatusOK, h.Do("PUT", f.Path("/labels/"+l), map[string]any{"name": "frontend"}, f.Owner.Access).Status)
	both(func(srv *apitest.Harness) {
		labels := issue(srv, aKey)["labels"].([]any)
		require.Equal(t, "frontend", labels[0].(map[string]any)["name"])
	})
	require.Equal(t, http.StatusOK, h.Do("PATCH", "/api/v1/me", map[string]any{"displayName": "Owner Renamed"}, f.Owner.Access).Status)
	both(func(srv *apitest.Harness) { require.Equal(t, "Owner Renamed", issue(srv, aKey)["reporterName"]) })

	r := h.Do("PUT", f.Path("/workflow/statuses/"+f.Todo.String()), map[string]any{"name": "Ready"}, f.Owner.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	both(func(srv *apitest.Harness) { require.Equal(t, "Ready", issue(srv, aKey)["statusName"]) })

	c := f.Create(t, map[string]any{"title": "c", "sprintId": sp})
	both(func(srv *apitest.Harness) { require.NotNil(t, issue(srv, c["key"].(string))) })
	require.Equal(t, http.StatusNoContent, f.Call("DELETE", sp, "/issues/"+c["key"].(string), nil).Status)
	both(func(srv *apitest.Harness) { require.Nil(t, issue(srv, c["key"].(string))) })
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", f.Path("/issues/"+bKey), nil, f.Owner.Access).Status)
	both(func(srv *apitest.Harness) { require.Nil(t, issue(srv, bKey)) })

	// A change the API never saw.
	_, err := h.DB.Pool.Exec(context.Background(), "UPDATE issues SET title = 'from SQL' WHERE key = $1 AND project_id = $2", aKey, f.ProjectID)
	require.NoError(t, err)
	both(func(srv *apitest.Harness) { require.Equal(t, "from SQL", issue(srv, aKey)["title"]) })
}
