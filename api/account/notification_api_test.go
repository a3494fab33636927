package account_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// ntSeed inserts n notifications for u directly, the newest first in id order when
// their instants tie, and returns their ids newest first (the list's order).
func ntSeed(t *testing.T, h *apitest.Harness, u apitest.User, n int) []string {
	t.Helper()
	base := time.Now().UTC().Add(-time.Hour)
	rows, err := h.DB.Pool.Query(context.Background(), `INSERT INTO notifications (id, user_id, type, title, body, link, project_key, issue_key, created_at)
		SELECT gen_random_uuid(), $1, 'ISSUE_ASSIGNED', 'T' || i, 'B' || i, '/p/ABC/issues/ABC-' || i, 'ABC', 'ABC-' || i,
		       $2::timestamptz + (i / 2) * interval '1 second'
		FROM generate_series(1, $3) AS i
		RETURNING id::text, created_at`, u.ID, base, n)
	require.NoError(t, err)
	type row struct {
		id string
		at time.Time
	}
	var all []row
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.id, &r.at))
		all = append(all, r)
	}
	require.NoError(t, rows.Err())
	// Expected order: created_at desc, id desc.
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			if all[j].at.After(all[i].at) || (all[j].at.Equal(all[i].at) && all[j].id > all[i].id) {
				all[i], all[j] = all[j], all[i]
			}
		}
	}
	ids := make([]string, len(all))
	for i, r := range all {
		ids[i] = r.id
	}
	return ids
}

func ntIDs(t *testing.T, page map[string]any) []string {
	t.Helper()
	var out []string
	for _, c := range page["content"].([]any) {
		out = append(out, c.(map[string]any)["id"].(string))
	}
	return out
}

func TestNotificationListPagingAndRead(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	u, other := h.Register("Reader"), h.Register("Other")
	ids := ntSeed(t, h, u, 25)
	otherIDs := ntSeed(t, h, other, 3)
	get := func(u apitest.User, query string) map[string]any {
		t.Helper()
		r := h.Do("GET", "/api/v1/notifications"+query, nil, u.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return r.JSON(t)
	}
	unread := func(u apitest.User) float64 {
		t.Helper()
		r := h.Do("GET", "/api/v1/notifications/unread-count", nil, u.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return r.JSON(t)["count"].(float64)
	}

	// Default page: 20, newest first with id breaking ties, only the caller's.
	p := get(u, "")
	require.EqualValues(t, 20, p["size"])
	require.EqualValues(t, 0, p["number"])
	require.EqualValues(t, 25, p["totalElements"])
	require.EqualValues(t, 2, p["totalPages"])
	require.Equal(t, false, p["last"])
	require.Equal(t, ids[:20], ntIDs(t, p))
	first := p["content"].([]any)[0].(map[string]any)
	var n int
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT substr(title, 2)::int FROM notifications WHERE id = $1", ids[0]).Scan(&n))
	require.Contains(t, []int{24, 25}, n, "one of the two newest (they share an instant)")
	require.Equal(t, map[string]any{"id": ids[0], "type": "ISSUE_ASSIGNED", "title": fmt.Sprint("T", n), "body": fmt.Sprint("B", n),
		"link": fmt.Sprint("/p/ABC/issues/ABC-", n), "read": false, "createdAt": first["createdAt"], "issueKey": fmt.Sprint("ABC-", n),
		"projectKey": "ABC"}, first)
	require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`, first["createdAt"])
	p = get(u, "?page=1")
	require.Equal(t, ids[20:], ntIDs(t, p))
	require.Equal(t, true, p["last"])
	p = get(u, "?page=2&size=10")
	require.Equal(t, ids[20:], ntIDs(t, p))
	require.Empty(t, get(u, "?page=9")["content"])
	require.Equal(t, 25.0, unread(u))

	// PATCH …/read: 200 with the notification, read; again is harmless.
	for _, id := range ids[:5] {
		r := h.Do("PATCH", "/api/v1/notifications/"+id+"/read", nil, u.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		m := r.JSON(t)
		require.Equal(t, id, m["id"])
		require.Equal(t, true, m["read"])
	}
	r := h.Do("PATCH", "/api/v1/notifications/"+ids[0]+"/read", nil, u.Access)
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, 20.0, unread(u))
	p = get(u, "?unread=true&size=50")
	require.EqualValues(t, 20, p["totalElements"])
	require.Equal(t, ids[5:], ntIDs(t, p))
	require.EqualValues(t, 25, get(u, "?unread=false")["totalElements"])

	// Another user's notification is not found, and stays unread; a bad id is 400.
	r = h.Do("PATCH", "/api/v1/notifications/"+otherIDs[0]+"/read", nil, u.Access)
	require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	require.Equal(t, "NOT_FOUND", r.JSON(t)["code"])
	require.Equal(t, "NOTIFICATION_NOT_FOUND", r.JSON(t)["reason"])
	r = h.Do("PATCH", "/api/v1/notifications/"+uuid.NewString()+"/read", nil, u.Access)
	require.Equal(t, http.StatusNotFound, r.Status)
	r = h.Do("PATCH", "/api/v1/notifications/not-a-uuid/read", nil, u.Access)
	require.Equal(t, http.StatusBadRequest, r.Status)
	require.Equal(t, "INVALID_UUID", r.JSON(t)["reason"])
	require.Equal(t, 3.0, unread(other))

	for query, reason := range map[string]string{"?unread=yes": "INVALID_QUERY", "?size=0": "INVALID_PAGE", "?page=-1": "INVALID_PAGE"} {
		r := h.Do("GET", "/api/v1/notifications"+query, nil, u.Access)
		require.Equal(t, http.StatusBadRequest, r.Status, query)
		require.Equal(t, reason, r.JSON(t)["reason"], query)
	}
	require.EqualValues(t, 200, get(u, "?size=500")["size"], "clamped")

	// read-all: 204, the caller's only.
	r = h.Do("POST", "/api/v1/notifications/read-all", nil, u.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	require.Equal(t, 0.0, unread(u))
	require.EqualValues(t, 0, get(u, "?unread=true")["totalElements"])
	require.Equal(t, 3.0, unread(other))

	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/notifications"}, {"GET", "/api/v1/notifications/unread-count"},
		{"POST", "/api/v1/notifications/read-all"}, {"PATCH", "/api/v1/notifications/" + ids[0] + "/read"},
	} {
		require.Equal(t, http.StatusUnauthorized, h.Do(c.method, c.path, nil, "").Status, c.path)
	}
}

// TestNotificationListQueryCount proves the list makes the same number of queries for
// a page of 1 and of 50 notifications.
func TestNotificationListQueryCount(t *testing.T) {
	t.Parallel()
	h, counter := apitest.CountingHarness(t)
	u := h.Register("Counted")
	count := func(query string) int64 {
		before := counter.N.Load()
		r := h.Do("GET", "/api/v1/notifications"+query, nil, u.Access)
		require.Equal(t, http.StatusOK, r.Status)
		return counter.N.Load() - before
	}
	ntSeed(t, h, u, 1)
	one, oneUnread := count("?size=50"), count("?size=50&unread=true")
	ntSeed(t, h, u, 60)
	fifty, fiftyUnread := count("?size=50"), count("?size=50&unread=true")
	require.Equal(t, one, fifty, fmt.Sprintf("queries for 1: %d, for 50: %d", one, fifty))
	require.Equal(t, oneUnread, fiftyUnread)
	require.Equal(t, int64(3), one, "credential check, the total, the page")
}
