package apitest

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

	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/workers"
)

// NotifyProject is an issue fixture on a fresh database with the workers running: the
// notification jobs of other tests never reach these workers, nor theirs ours.
func NotifyProject(t testing.TB, tweak func(*workers.Config)) *Project {
	t.Helper()
	h := New(t, Options{})
	f := NewProject(t, h)
	h.StartWorkersWith(tweak)
	return f
}

// DrainJobs waits until every notification and e-mail job has completed; a job that
// failed an attempt fails the test with its error at once. The periodic digest job
// (notify.digest) is left out: it is enqueued again and again.
func DrainJobs(t testing.TB, h *Harness) {
	t.Helper()
	Eventually(t, 15*time.Second, func() bool {
		var errs []string
		rows, err := h.DB.Pool.Query(context.Background(),
			"SELECT errors::text FROM river_job WHERE kind LIKE 'notify.%' AND kind <> 'notify.digest' AND errors IS NOT NULL")
		require.NoError(t, err)
		for rows.Next() {
			var e string
			require.NoError(t, rows.Scan(&e))
			errs = append(errs, e)
		}
		require.NoError(t, rows.Err())
		require.Empty(t, errs, "notification jobs failed")
		return h.Count("SELECT count(*) FROM river_job WHERE kind LIKE 'notify.%' AND kind <> 'notify.digest' AND state <> 'completed'") == 0
	}, "notification jobs completed")
}

// Notifications is the user's notifications (all of them, newest first).
func Notifications(t testing.TB, h *Harness, u User) []map[string]any {
	t.Helper()
	r := h.Do("GET", "/api/v1/notifications?size=200", nil, u.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var out []map[string]any
	for _, c := range r.JSON(t)["content"].([]any) {
		out = append(out, c.(map[string]any))
	}
	return out
}

// NotificationTypes is "TYPE ISSUE-KEY" of each of the user's notifications, sorted: jobs of
// successive events run concurrently, so their notifications' order is not the events'.
func NotificationTypes(t testing.TB, h *Harness, u User) []string {
	t.Helper()
	out := []string{}
	for _, n := range Notifications(t, h, u) {
		out = append(out, n["type"].(string)+" "+n["issueKey"].(string))
	}
	sort.Strings(out)
	return out
}

// FindNotification is the user's one notification of type typ on issue key.
func FindNotification(t testing.TB, h *Harness, u User, typ, key string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, n := range Notifications(t, h, u) {
		if n["type"] == typ && n["issueKey"] == key {
			found = append(found, n)
		}
	}
	require.Len(t, found, 1, "%s %s", typ, key)
	return found[0]
}

// NotifyIssue creates an issue as creator (assigned to assignee when not nil) and returns
// its id and key.
func NotifyIssue(t testing.TB, f *Project, creator User, title string, assignee *User) (uuid.UUID, string) {
	t.Helper()
	body := map[string]any{"title": title}
	if assignee != nil {
		body["assigneeId"] = assignee.ID
	}
	r := f.H.Do("POST", f.Path("/issues"), body, creator.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	m := r.JSON(t)
	return uuid.MustParse(m["id"].(string)), m["key"].(string)
}

// PatchIssueAs changes an issue as u.
func PatchIssueAs(t testing.TB, f *Project, u User, key string, body map[string]any) {
	t.Helper()
	r := f.H.Do("PATCH", f.Path("/issues/"+key), body, u.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
}

// CommentAs stores a comment on the issue and emits comment.Created on the server's
// bus in the same transaction, as the comments API does (author nil: a system comment).
func CommentAs(t testing.TB, f *Project, issueID uuid.UUID, issueKey string, author *User, body string, mentioned ...uuid.UUID) {
	t.Helper()
	var title string
	require.NoError(t, f.H.DB.Pool.QueryRow(context.Background(), "SELECT title FROM issues WHERE id = $1", issueID).Scan(&title))
	by := issue.By{}
	if author != nil {
		id := author.ID
		by = issue.By{ID: &id, Email: author.Email}
	}
	c := store.Comment{ID: uuid.New(), IssueID: issueID, AuthorID: by.ID, Body: body}
	require.NoError(t, store.InTx(context.Background(), f.H.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&c).Exec(ctx); err != nil {
			return err
		}
		return f.H.Server.Bus().Emit(ctx, tx, comment.Created{
			Subject: issue.Subject{ProjectID: f.ProjectID, ProjectKey: f.Key, IssueID: issueID, IssueKey: issueKey, Title: title},
			By:      by, CommentID: c.ID, Body: body, Mentioned: mentioned, At: time.Now().UTC(),
		})
	}))
}

// SetLanguage stores u's language through the API.
func SetLanguage(t testing.TB, h *Harness, u User, lang string) {
	t.Helper()
	r := h.Do("PATCH", "/api/v1/me/language", map[string]any{"language": lang}, u.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
}

// SetPreference switches one type's channels for u through the API.
func SetPreference(t testing.TB, h *Harness, u User, typ string, inApp, email bool) {
	t.Helper()
	r := h.Do("PUT", "/api/v1/me/notification-preferences",
		map[string]any{"preferences": []any{map[string]any{"type": typ, "inApp": inApp, "email": email}}}, u.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
}

// DisplayName is the display name a fixture user registered with (Register adds no suffix
// to it), for expected texts.
func DisplayName(u User) string {
	name, _, _ := strings.Cut(u.Email, "-")
	return strings.ToUpper(name[:1]) + name[1:]
}

// MailJobs counts the e-mail jobs of one notification type.
func MailJobs(h *Harness, typ string) int {
	return h.Count("SELECT count(*) FROM river_job WHERE kind = 'notify.mail' AND args->>'type' = $1", typ)
}
