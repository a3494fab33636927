package api_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/workers"
)

// ntFixture is an issue fixture on a fresh database with the workers running: the
// notification jobs of other tests never reach these workers, nor theirs ours.
func ntFixture(t *testing.T, tweak func(*workers.Config)) *issueFixture {
	t.Helper()
	h := apitest.New(t, apitest.Options{})
	f := issueFixtureOn(t, h)
	h.StartWorkersWith(tweak)
	return f
}

// ntDrain waits until every notification and e-mail job has completed; a job that
// failed an attempt fails the test with its error at once.
func ntDrain(t *testing.T, h *apitest.Harness) {
	t.Helper()
	apitest.Eventually(t, 15*time.Second, func() bool {
		var errs []string
		rows, err := h.DB.Pool.Query(context.Background(),
			"SELECT errors::text FROM river_job WHERE kind LIKE 'notify.%' AND errors IS NOT NULL")
		require.NoError(t, err)
		for rows.Next() {
			var e string
			require.NoError(t, rows.Scan(&e))
			errs = append(errs, e)
		}
		require.NoError(t, rows.Err())
		require.Empty(t, errs, "notification jobs failed")
		return h.Count("SELECT count(*) FROM river_job WHERE kind LIKE 'notify.%' AND state <> 'completed'") == 0
	}, "notification jobs completed")
}

// ntList is the user's notifications (all of them, newest first).
func ntList(t *testing.T, h *apitest.Harness, u apitest.User) []map[string]any {
	t.Helper()
	r := h.Do("GET", "/api/v1/notifications?size=200", nil, u.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var out []map[string]any
	for _, c := range r.JSON(t)["content"].([]any) {
		out = append(out, c.(map[string]any))
	}
	return out
}

// ntTypes is "TYPE ISSUE-KEY" of each of the user's notifications, sorted: jobs of
// successive events run concurrently, so their notifications' order is not the events'.
func ntTypes(t *testing.T, h *apitest.Harness, u apitest.User) []string {
	t.Helper()
	out := []string{}
	for _, n := range ntList(t, h, u) {
		out = append(out, n["type"].(string)+" "+n["issueKey"].(string))
	}
	sort.Strings(out)
	return out
}

// ntFind is the user's one notification of type typ on issue key.
func ntFind(t *testing.T, h *apitest.Harness, u apitest.User, typ, key string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, n := range ntList(t, h, u) {
		if n["type"] == typ && n["issueKey"] == key {
			found = append(found, n)
		}
	}
	require.Len(t, found, 1, "%s %s", typ, key)
	return found[0]
}

// ntIssue creates an issue as creator (assigned to assignee when not nil) and returns
// its id and key.
func ntIssue(t *testing.T, f *issueFixture, creator apitest.User, title string, assignee *apitest.User) (uuid.UUID, string) {
	t.Helper()
	body := map[string]any{"title": title}
	if assignee != nil {
		body["assigneeId"] = assignee.ID
	}
	r := f.h.Do("POST", f.path("/issues"), body, creator.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m := r.JSON(t)
	return uuid.MustParse(m["id"].(string)), m["key"].(string)
}

// ntPatch changes an issue as u.
func ntPatch(t *testing.T, f *issueFixture, u apitest.User, key string, body map[string]any) {
	t.Helper()
	r := f.h.Do("PATCH", f.path("/issues/"+key), body, u.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
}

// ntComment stores a comment on the issue and emits comment.Created on the server's
// bus in the same transaction, as the comments API does (author nil: a system comment).
func ntComment(t *testing.T, f *issueFixture, issueID uuid.UUID, issueKey string, author *apitest.User, body string, mentioned ...uuid.UUID) {
	t.Helper()
	var title string
	require.NoError(t, f.h.DB.Pool.QueryRow(context.Background(), "SELECT title FROM issues WHERE id = $1", issueID).Scan(&title))
	by := issue.By{}
	if author != nil {
		id := author.ID
		by = issue.By{ID: &id, Email: author.Email}
	}
	c := store.Comment{ID: uuid.New(), IssueID: issueID, AuthorID: by.ID, Body: body}
	require.NoError(t, store.InTx(context.Background(), f.h.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&c).Exec(ctx); err != nil {
			return err
		}
		return f.h.Server.Bus().Emit(ctx, tx, comment.Created{
			Subject: issue.Subject{ProjectID: f.projectID, ProjectKey: f.key, IssueID: issueID, IssueKey: issueKey, Title: title},
			By:      by, CommentID: c.ID, Body: body, Mentioned: mentioned, At: time.Now().UTC(),
		})
	}))
}

// ntSetLanguage stores u's language through the API.
func ntSetLanguage(t *testing.T, h *apitest.Harness, u apitest.User, lang string) {
	t.Helper()
	r := h.Do("PATCH", "/api/v1/me/language", map[string]any{"language": lang}, u.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
}

// ntPreference switches one type's channels for u through the API.
func ntPreference(t *testing.T, h *apitest.Harness, u apitest.User, typ string, inApp, email bool) {
	t.Helper()
	r := h.Do("PUT", "/api/v1/me/notification-preferences",
		map[string]any{"preferences": []any{map[string]any{"type": typ, "inApp": inApp, "email": email}}}, u.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
}

// ntName is the display name a fixture user registered with (Register adds no suffix
// to it), for expected texts.
func ntName(u apitest.User) string {
	name, _, _ := strings.Cut(u.Email, "-")
	return strings.ToUpper(name[:1]) + name[1:]
}

// ntMailJobs counts the e-mail jobs of one notification type.
func ntMailJobs(h *apitest.Harness, typ string) int {
	return h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.mail' AND args->>'type' = $1", typ)
}
