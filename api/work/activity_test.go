package work_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// acFeed reads one page of an issue's activity as token.
func acFeed(f *apitest.Project, t *testing.T, ref, token, query string) map[string]any {
	t.Helper()
	r := f.H.Do("GET", f.Path("/issues/"+ref+"/activity?"+query), nil, token)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// acSummary renders a feed page as type:old→new lines, newest first.
func acSummary(page map[string]any) []string {
	out := []string{}
	str := func(v any) string {
		if v == nil {
			return "∅"
		}
		return v.(string)
	}
	for _, e := range page["content"].([]any) {
		m := e.(map[string]any)
		out = append(out, m["type"].(string)+":"+str(m["oldValue"])+"→"+str(m["newValue"]))
	}
	return out
}

// TestActivityFeed: every kind of entry an issue collects (issue updates, sprint moves,
// comments, attachment rows written by the attachment endpoints) comes back newest
// first with display values, actor and comment link; defaults are page 0, size 50.
func TestActivityFeed(t *testing.T) {
	t.Parallel()
	f := apitest.NewSprintProject(t, apitest.Shared(t))
	h := f.H
	iss := f.Create(t, map[string]any{"title": "Watched"})
	id, key := iss["id"].(string), iss["key"].(string)
	sprint := f.NewSprint(t, map[string]any{"name": "Sprint 1"})["id"].(string)

	f.Patch(t, key, map[string]any{"statusId": f.Prog})
	f.Patch(t, key, map[string]any{"assigneeId": f.Member.ID, "priority": "HIGH"})
	f.Put(t, sprint, key)
	c := cmPost(f.Project, t, key, f.Member.Access, "<p>Looks <b>good</b> to me</p>")
	_, err := h.DB.Pool.Exec(context.Background(), `INSERT INTO issue_activities (issue_id, actor_id, type, new_value)
		VALUES ($1, $2, 'ATTACHMENT_ADDED', 'trace.log')`, id, f.Member.ID)
	require.NoError(t, err)
	_, err = h.DB.Pool.Exec(context.Background(), `INSERT INTO issue_activities (issue_id, actor_id, type, old_value)
		VALUES ($1, $2, 'ATTACHMENT_REMOVED', 'trace.log')`, id, f.Owner.ID)
	require.NoError(t, err)
	f.Patch(t, key, map[string]any{"clearAssignee": true})

	m := acFeed(f.Project, t, key, f.Viewer.Access, "")
	require.EqualValues(t, 0, m["number"])
	require.EqualValues(t, 50, m["size"])
	require.EqualValues(t, 8, m["totalElements"])
	require.EqualValues(t, 1, m["totalPages"])
	got := acSummary(m)
	require.Len(t, got, 8)
	require.Equal(t, []string{
		"UNASSIGNED:Mia→∅",
		"ATTACHMENT_REMOVED:trace.log→∅",
		"ATTACHMENT_ADDED:∅→trace.log",
		"COMMENT:∅→Looks good to me",
		"SPRINT_CHANGED:∅→Sprint 1",
	}, got[:5])
	// One PATCH writes these two together; their relative order is not promised.
	require.ElementsMatch(t, []string{"ASSIGNED:∅→Mia", "PRIORITY_CHANGED:MEDIUM→HIGH"}, got[5:7])
	require.Equal(t, "STATUS_CHANGED:To Do→In Progress", got[7])

	entries := m["content"].([]any)
	comment := entries[3].(map[string]any)
	require.Equal(t, c["id"], comment["commentId"])
	require.Equal(t, id, comment["issueId"])
	require.Equal(t, f.Member.ID.String(), comment["actorId"])
	require.Equal(t, "Mia", comment["actorName"])
	removed := entries[1].(map[string]any)
	require.Equal(t, f.Owner.ID.String(), removed["actorId"])
	require.Equal(t, "Owner", removed["actorName"])
	for _, e := range entries {
		e := e.(map[string]any)
		for _, k := range []string{"id", "issueId", "actorId", "actorName", "type", "commentId", "oldValue", "newValue", "createdAt"} {
			require.Contains(t, e, k)
		}
		require.Regexp(t, `Z$`, e["createdAt"])
		if e["type"] != "COMMENT" {
			require.Nil(t, e["commentId"])
		}
	}
	// Newest first by createdAt.
	for i := 1; i < len(entries); i++ {
		a, _ := time.Parse(time.RFC3339Nano, entries[i-1].(map[string]any)["createdAt"].(string))
		b, _ := time.Parse(time.RFC3339Nano, entries[i].(map[string]any)["createdAt"].(string))
		require.False(t, a.Before(b), "entry %d is not newer than entry %d", i-1, i)
	}

	// page and size pick the slice; past the end is empty with the right total.
	p := acFeed(f.Project, t, key, f.Member.Access, "page=1&size=3")
	require.Equal(t, acSummary(m)[3:6], acSummary(p))
	require.EqualValues(t, 3, p["totalPages"])
	past := acFeed(f.Project, t, key, f.Member.Access, "page=5&size=3")
	require.Equal(t, []any{}, past["content"])
	require.EqualValues(t, 8, past["totalElements"])

	// A deleted comment's entry stays, without link or text.
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", cmPath(f.Project, key, "/"+c["id"].(string)), nil, f.Member.Access).Status)
	after := acFeed(f.Project, t, key, f.Viewer.Access, "")["content"].([]any)[3].(map[string]any)
	require.Equal(t, comment["id"], after["id"])
	require.Nil(t, after["commentId"])
	require.Nil(t, after["newValue"])

	// Another issue's entries stay out; a new issue has none.
	fresh := f.Create(t, map[string]any{"title": "Fresh"})
	empty := acFeed(f.Project, t, fresh["id"].(string), f.Viewer.Access, "")
	require.Equal(t, []any{}, empty["content"])
	require.EqualValues(t, 0, empty["totalElements"])
	require.EqualValues(t, 50, empty["size"])

	// Paths and roles.
	apitest.RequireProblem(t, h.Do("GET", f.Path("/issues/"+key+"/activity"), nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	require.Equal(t, 401, h.Do("GET", f.Path("/issues/"+key+"/activity"), nil, "").Status)
	apitest.RequireProblem(t, h.Do("GET", f.Path("/issues/"+f.Key+"-999/activity"), nil, f.Member.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("GET", f.Path("/issues/"+uuid.NewString()+"/activity"), nil, f.Member.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("GET", f.Path("/issues/bad_ref/activity"), nil, f.Member.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_ISSUE_REF"))
	apitest.RequireProblem(t, h.Do("GET", "/api/v1/projects/NOSUCH8/issues/"+key+"/activity", nil, f.Member.Access), 404, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
	apitest.RequireProblem(t, h.Do("GET", f.Path("/issues/"+key+"/activity?page=x"), nil, f.Member.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_PAGE"))
	apitest.RequireProblem(t, h.Do("GET", f.Path("/issues/"+key+"/activity?size=-2"), nil, f.Member.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_PAGE"))
	other := apitest.NewProject(t, h)
	foreign := other.Create(t, map[string]any{"title": "Elsewhere"})
	apitest.RequireProblem(t, h.Do("GET", f.Path("/issues/"+foreign["id"].(string)+"/activity"), nil, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
}

// TestActivityFeedPagesStably: entries sharing one created_at come in id desc order, so
// pages of 1 and of 4 hold each entry exactly once.
func TestActivityFeedPagesStably(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	iss := f.Create(t, map[string]any{"title": "Stable"})
	type row struct {
		id string
		at time.Time
	}
	var want []row
	same := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	for i := range 9 {
		at := same
		if i == 8 {
			at = same.Add(-time.Minute)
		}
		var id string
		require.NoError(t, f.H.DB.Pool.QueryRow(context.Background(), `INSERT INTO issue_activities (issue_id, actor_id, type, old_value, new_value, created_at)
			VALUES ($1, $2, 'TITLE_CHANGED', 'a', $3, $4) RETURNING id::text`, iss["id"], f.Owner.ID, "t"+strconv.Itoa(i), at).Scan(&id))
		want = append(want, row{id, at})
	}
	slices.SortFunc(want, func(a, b row) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	wantIDs := []string{}
	for _, w := range want {
		wantIDs = append(wantIDs, w.id)
	}
	for _, size := range []int{1, 4} {
		got := []string{}
		for p := 0; p*size < len(want); p++ {
			got = append(got, cmIDs(acFeed(f, t, iss["key"].(string), f.Viewer.Access, "page="+strconv.Itoa(p)+"&size="+strconv.Itoa(size)))...)
		}
		require.Equal(t, wantIDs, got, "size %d", size)
	}
}

// TestActivityFeedQueryCount: the feed costs the same statements for 1 entry as for
// 40 by different actors.
func TestActivityFeedQueryCount(t *testing.T) {
	t.Parallel()
	h, counter := apitest.CountingHarness(t)
	f := apitest.NewProject(t, h)
	key := f.Create(t, map[string]any{"title": "Counted"})["key"].(string)
	count := func() int64 {
		before := counter.N.Load()
		r := h.Do("GET", f.Path("/issues/"+key+"/activity"), nil, f.Viewer.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return counter.N.Load() - before
	}
	f.Patch(t, key, map[string]any{"title": "Counted 0"})
	one := count()
	for i := 1; i < 40; i++ {
		if i%2 == 0 {
			f.Patch(t, key, map[string]any{"title": "Counted " + strconv.Itoa(i)})
		} else {
			cmPost(f, t, key, f.Member.Access, "note "+strconv.Itoa(i))
		}
	}
	require.Len(t, acFeed(f, t, key, f.Viewer.Access, "")["content"], 40)
	require.Equal(t, one, count())
	require.Equal(t, int64(3), one, "credential check, project access, the page with its total")
}
