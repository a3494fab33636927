package work_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
)

// cmPath is …/issues/{ref}/comments followed by suffix.
func cmPath(f *apitest.Project, ref, suffix string) string {
	return f.Path("/issues/" + ref + "/comments" + suffix)
}

// cmPost comments on ref as token and expects 201.
func cmPost(f *apitest.Project, t *testing.T, ref, token, body string) map[string]any {
	t.Helper()
	r := f.H.Do("POST", cmPath(f, ref, ""), map[string]any{"body": body}, token)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// cmList reads one page of ref's comments as token.
func cmList(f *apitest.Project, t *testing.T, ref, token, query string) map[string]any {
	t.Helper()
	r := f.H.Do("GET", cmPath(f, ref, "?"+query), nil, token)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	return r.JSON(t)
}

// cmIDs are the ids of a page's content, in order.
func cmIDs(page map[string]any) []string {
	out := []string{}
	for _, c := range page["content"].([]any) {
		out = append(out, c.(map[string]any)["id"].(string))
	}
	return out
}

// cmEvents records the comment.created events a harness's bus publishes.
type cmEvents struct {
	mu  sync.Mutex
	got []comment.Created
}

// cmCapture registers a recording consumer on h's bus; call it before any request.
func cmCapture(h *apitest.Harness) *cmEvents {
	e := &cmEvents{}
	h.Server.Bus().Register(func(_ context.Context, _ bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.got = append(e.got, ev.(comment.Created))
		return nil, nil
	}, comment.EventCreated)
	return e
}

func (e *cmEvents) all() []comment.Created {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]comment.Created(nil), e.got...)
}

// TestCommentCreate: a MEMBER's comment is stored sanitized and answered 201; the
// comment, its COMMENT activity entry, the audit job (WRITE on) and the webhook
// delivery of comment.created commit in one transaction; the event carries the
// resolved mentions.
func TestCommentCreate(t *testing.T) {
	t.Parallel()
	h := apitest.WebhookHarness(t)
	events := cmCapture(h)
	f := apitest.NewProject(t, h)
	wh, _ := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"comment.created"}})
	other, _ := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"issue.created"}})
	iss := f.Create(t, map[string]any{"title": "Talk"})
	issueID, issueKey := iss["id"].(string), iss["key"].(string)

	// WRITE is off by default: no audit job.
	quiet := cmPost(f, t, issueKey, f.Member.Access, "quiet")
	require.Empty(t, apitest.IssueAuditJobs(t, h, quiet["id"].(string)))

	apitest.SetAuditLevel(t, h, "WRITE", true)
	body := `<p>Hi @owner, @VIV. and @otto — <b>see</b> <a href="javascript:alert(1)">this</a> <script>alert(1)</script>` +
		`<img src="https://example.com/x.png" onerror="alert(1)"> thanks @mia</p>`
	want := `<p>Hi @owner, @VIV. and @otto — <b>see</b> this <img src="https://example.com/x.png"> thanks @mia</p>`
	before := time.Now()
	r := h.Do("POST", cmPath(f, strings.ToLower(issueKey), ""), map[string]any{"body": body}, f.Member.Access, "User-Agent", "cm-test")
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	c := r.JSON(t)
	id := c["id"].(string)
	require.Equal(t, issueID, c["issueId"])
	require.Equal(t, f.Member.ID.String(), c["authorId"])
	require.Equal(t, "Mia", c["authorName"])
	require.Equal(t, want, c["body"])
	require.Nil(t, c["editedAt"])
	require.Contains(t, c, "editedAt")
	require.Equal(t, false, c["deleted"])
	created, err := time.Parse(time.RFC3339Nano, c["createdAt"].(string))
	require.NoError(t, err)
	require.Regexp(t, `Z$`, c["createdAt"])
	require.WithinDuration(t, before, created, time.Minute)
	require.Equal(t, c["createdAt"], c["updatedAt"])

	// The stored row is the sanitized one.
	require.Equal(t, 1, h.Count("SELECT count(*) FROM comments WHERE id = $1 AND body = $2 AND author_id = $3 AND deleted_at IS NULL",
		id, want, f.Member.ID))
	// One transaction: comment, activity entry, audit job and delivery record share the xmin.
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM comments AS c
		JOIN issue_activities AS a ON a.comment_id = c.id AND a.xmin = c.xmin
		JOIN river_job AS j ON j.kind = 'audit.record' AND j.args->>'resourceId' = c.id::text AND j.xmin = c.xmin
		JOIN webhook_deliveries AS d ON d.webhook_id = $2 AND d.xmin = c.xmin
		WHERE c.id = $1 AND a.type = 'COMMENT' AND a.actor_id = $3 AND a.issue_id = c.issue_id
		  AND a.new_value = 'Hi @owner, @VIV. and @otto — see this thanks @mia'
		  AND j.args->>'action' = 'COMMENT_CREATED' AND j.args->>'level' = 'WRITE' AND j.args->>'resourceType' = 'COMMENT'
		  AND j.args->>'userId' = $3::text AND j.args->>'userAgent' = 'cm-test' AND j.args->>'projectId' = $4::text
		  AND j.args->>'details' NOT LIKE '%thanks%'`, id, wh["id"], f.Member.ID, f.ProjectID))
	require.Equal(t, []string{"COMMENT_CREATED"}, apitest.IssueAuditJobs(t, h, id))

	// The webhook subscribed to comment.created got one delivery with {issueId, commentId};
	// the one subscribed to issue.created only its issue's.
	var payload string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		"SELECT payload FROM webhook_deliveries WHERE webhook_id = $1 AND event_type = 'comment.created' AND payload LIKE '%' || $2 || '%'",
		wh["id"], id).Scan(&payload))
	var msg map[string]any
	require.NoError(t, json.Unmarshal([]byte(payload), &msg))
	require.Equal(t, "comment.created", msg["event"])
	require.Equal(t, f.ProjectID.String(), msg["projectId"])
	require.Equal(t, map[string]any{"issueId": issueID, "commentId": id}, msg["data"])
	require.Equal(t, 2, h.Count("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1", wh["id"]), "one per comment")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1", other["id"]), "issue.created only")
	require.Equal(t, 2, h.Count("SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver' AND args->>'webhookId' = $1 AND args->'issueIds' = jsonb_build_array($2::text)",
		wh["id"], issueID), "one delivery job per comment")

	// The event: subject, author, sanitized body, and the mentions resolved once, in
	// order, without the author (@mia) and the outsider (@otto).
	evs := events.all()
	require.Len(t, evs, 2)
	ev := evs[1]
	require.Equal(t, comment.EventCreated, ev.EventName())
	require.Equal(t, uuid.MustParse(id), ev.CommentID)
	require.Equal(t, issue.Subject{ProjectID: f.ProjectID, ProjectKey: f.Key, IssueID: uuid.MustParse(issueID), IssueKey: issueKey, Title: "Talk"}, ev.Subject)
	require.Equal(t, f.Member.ID, *ev.By.ID)
	require.Equal(t, f.Member.Email, ev.By.Email)
	require.Equal(t, want, ev.Body)
	require.Equal(t, []uuid.UUID{f.Owner.ID, f.Viewer.ID}, ev.Mentioned)
	require.WithinDuration(t, created, ev.At, time.Second)
	require.Equal(t, []uuid.UUID{}, evs[0].Mentioned)
}

// TestCommentCreateRefused: bad input is a 4xx that stores nothing; roles and paths
// are checked before anything is written.
func TestCommentCreateRefused(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	iss := f.Create(t, map[string]any{"title": "Quiet"})
	key := iss["key"].(string)
	post := func(body any, token string, ref ...string) *apitest.Response {
		path := cmPath(f, key, "")
		if len(ref) > 0 {
			path = ref[0]
		}
		return h.Do("POST", path, body, token)
	}

	apitest.RequireProblem(t, post(map[string]any{}, f.Member.Access), 400, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))
	apitest.RequireProblem(t, post(map[string]any{"body": nil}, f.Member.Access), 400, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))
	apitest.RequireProblem(t, post(map[string]any{"body": 12}, f.Member.Access), 400, "BAD_REQUEST", apitest.Reason("WRONG_TYPE"))
	apitest.RequireProblem(t, post(`{"body":`, f.Member.Access), 400, "BAD_REQUEST", apitest.Reason("MALFORMED_JSON"))
	apitest.RequireProblem(t, post(`{"body":"a\u0000b"}`, f.Member.Access), 400, "VALIDATION_ERROR", apitest.Reason("NUL_CHARACTER"))
	for _, c := range []struct {
		body, code string
	}{
		{"  \n\t ", "BLANK"},
		{strings.Repeat("x", comment.MaxBody+1), "LENGTH"},
		{"<script>alert(1)</script>", "BLANK"},
		{`<iframe src="https://evil.example"></iframe>`, "BLANK"},
	} {
		r := post(map[string]any{"body": c.body}, f.Member.Access)
		apitest.RequireProblem(t, r, 400, "VALIDATION_ERROR", apitest.NoReason)
		m := r.JSON(t)
		require.Contains(t, m["details"], "body", "%s", r.Body)
		require.Equal(t, c.code, m["errors"].([]any)[0].(map[string]any)["code"], "%s", r.Body)
	}
	r := h.Do("POST", cmPath(f, key, ""), map[string]any{"body": "<script>x</script>"}, f.Member.Access, "Accept-Language", "de")
	apitest.RequireProblem(t, r, 400, "VALIDATION_ERROR", apitest.NoReason)
	require.Equal(t, map[string]any{"body": "darf nach dem Entfernen von unsicherem HTML nicht leer sein"}, r.JSON(t)["details"])

	apitest.RequireProblem(t, post(map[string]any{"body": "hi"}, f.Viewer.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, post(map[string]any{"body": "hi"}, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	require.Equal(t, 401, post(map[string]any{"body": "hi"}, "").Status)
	apitest.RequireProblem(t, post(map[string]any{"body": "hi"}, f.Member.Access, "/api/v1/projects/NOSUCH9/issues/"+key+"/comments"), 404, "NOT_FOUND", apitest.Reason("PROJECT_NOT_FOUND"))
	apitest.RequireProblem(t, post(map[string]any{"body": "hi"}, f.Member.Access, cmPath(f, f.Key+"-9999", "")), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	apitest.RequireProblem(t, post(map[string]any{"body": "hi"}, f.Member.Access, cmPath(f, uuid.NewString(), "")), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	apitest.RequireProblem(t, post(map[string]any{"body": "hi"}, f.Member.Access, cmPath(f, "not_a_key", "")), 400, "BAD_REQUEST", apitest.Reason("INVALID_ISSUE_REF"))
	// An issue of another project is not found through this one, by key or by id.
	elsewhere := apitest.NewProject(t, h)
	foreign := elsewhere.Create(t, map[string]any{"title": "Elsewhere"})
	apitest.RequireProblem(t, post(map[string]any{"body": "hi"}, f.Owner.Access, cmPath(f, foreign["key"].(string), "")), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	apitest.RequireProblem(t, post(map[string]any{"body": "hi"}, f.Owner.Access, cmPath(f, foreign["id"].(string), "")), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))

	require.Zero(t, h.Count("SELECT count(*) FROM comments WHERE issue_id IN ($1, $2)", iss["id"], foreign["id"]))
	require.Zero(t, h.Count("SELECT count(*) FROM issue_activities WHERE issue_id = $1 AND type = 'COMMENT'", iss["id"]))

	// Exactly the limit is fine, and counts characters, not bytes.
	long := cmPost(f, t, key, f.Member.Access, strings.Repeat("é", comment.MaxBody))
	require.Len(t, []rune(long["body"].(string)), comment.MaxBody)
	require.Len(t, []rune(*cmActivityValue(t, h, long["id"].(string))), 200, "the activity excerpt is short")
}

// cmActivityValue reads the newValue of a comment's activity entry.
func cmActivityValue(t *testing.T, h *apitest.Harness, commentID string) *string {
	t.Helper()
	var v *string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(),
		"SELECT new_value FROM issue_activities WHERE comment_id = $1", commentID).Scan(&v))
	return v
}

// TestCommentEdit: only the author edits, and only with WRITE; the body is sanitized
// again, editedAt set and the activity excerpt follows.
func TestCommentEdit(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	f := apitest.NewProject(t, h)
	mate := h.Register("Mate")
	f.AddMember(t, mate, "MEMBER")
	iss := f.Create(t, map[string]any{"title": "Edit me"})
	key := iss["key"].(string)
	c := cmPost(f, t, key, f.Member.Access, "first words")
	id := c["id"].(string)
	put := func(token, path string, body any, headers ...string) *apitest.Response {
		return h.Do("PUT", path, body, token, headers...)
	}
	own := cmPath(f, key, "/"+id)

	apitest.SetAuditLevel(t, h, "WRITE", true)
	r := put(f.Member.Access, own, map[string]any{"body": `<p onclick="x()">second <em>take</em><script>bad()</script></p>`})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	e := r.JSON(t)
	require.Equal(t, id, e["id"])
	require.Equal(t, `<p>second <em>take</em></p>`, e["body"])
	require.Equal(t, c["createdAt"], e["createdAt"])
	require.NotNil(t, e["editedAt"])
	edited, err := time.Parse(time.RFC3339Nano, e["editedAt"].(string))
	require.NoError(t, err)
	createdAt, _ := time.Parse(time.RFC3339Nano, c["createdAt"].(string))
	require.True(t, edited.After(createdAt), "editedAt %s after createdAt %s", edited, createdAt)
	require.Equal(t, e["editedAt"], e["updatedAt"])
	require.Equal(t, "Mia", e["authorName"])
	require.Equal(t, "second take", *cmActivityValue(t, h, id), "the excerpt follows the edit")
	listed := cmList(f, t, key, f.Viewer.Access, "")["content"].([]any)[0].(map[string]any)
	require.Equal(t, e, listed, "the list shows the edit")
	require.Equal(t, []string{"COMMENT_UPDATED"}, apitest.IssueAuditJobs(t, h, id))

	// Anyone else with WRITE: 403 NOT_AUTHOR, the owner and a project ADMIN included;
	// a VIEWER is refused by the role check; nothing changes.
	for _, token := range []string{mate.Access, f.Owner.Access} {
		apitest.RequireProblem(t, put(token, own, map[string]any{"body": "hijack"}), 403, "FORBIDDEN", apitest.Reason("NOT_AUTHOR"))
	}
	de := put(mate.Access, own, map[string]any{"body": "hijack"}, "Accept-Language", "de")
	require.Equal(t, "Nur die Verfasserin oder der Verfasser kann diesen Kommentar bearbeiten.", de.JSON(t)["message"])
	apitest.RequireProblem(t, put(f.Viewer.Access, own, map[string]any{"body": "hijack"}), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, put(f.Outsider.Access, own, map[string]any{"body": "hijack"}), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	// The author demoted to VIEWER may no longer edit.
	require.Equal(t, http.StatusOK, h.Do("PATCH", f.Path("/members/"+f.Member.ID.String()), map[string]any{"role": "VIEWER"}, f.Owner.Access).Status)
	apitest.RequireProblem(t, put(f.Member.Access, own, map[string]any{"body": "demoted"}), 403, "FORBIDDEN", apitest.NoReason)
	require.Equal(t, http.StatusOK, h.Do("PATCH", f.Path("/members/"+f.Member.ID.String()), map[string]any{"role": "MEMBER"}, f.Owner.Access).Status)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM comments WHERE id = $1 AND body = '<p>second <em>take</em></p>'", id))

	// Validation as on create.
	apitest.RequireProblem(t, put(f.Member.Access, own, map[string]any{}), 400, "BAD_REQUEST", apitest.Reason("MISSING_FIELD"))
	apitest.RequireProblem(t, put(f.Member.Access, own, map[string]any{"body": " "}), 400, "VALIDATION_ERROR", apitest.NoReason)
	apitest.RequireProblem(t, put(f.Member.Access, own, map[string]any{"body": "<script>x</script>"}), 400, "VALIDATION_ERROR", apitest.NoReason)
	apitest.RequireProblem(t, put(f.Member.Access, own, map[string]any{"body": strings.Repeat("y", comment.MaxBody+1)}), 400, "VALIDATION_ERROR", apitest.NoReason)

	// Paths: a malformed id is 400; unknown, of another issue or deleted is 404.
	apitest.RequireProblem(t, put(f.Member.Access, cmPath(f, key, "/not-a-uuid"), map[string]any{"body": "x"}), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	apitest.RequireProblem(t, put(f.Member.Access, cmPath(f, key, "/"+uuid.NewString()), map[string]any{"body": "x"}), 404, "NOT_FOUND", apitest.Reason("COMMENT_NOT_FOUND"))
	sibling := f.Create(t, map[string]any{"title": "Sibling"})["key"].(string)
	apitest.RequireProblem(t, put(f.Member.Access, cmPath(f, sibling, "/"+id), map[string]any{"body": "x"}), 404, "NOT_FOUND", apitest.Reason("COMMENT_NOT_FOUND"))
	apitest.RequireProblem(t, put(f.Member.Access, cmPath(f, f.Key+"-999", "/"+id), map[string]any{"body": "x"}), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", own, nil, f.Member.Access).Status)
	apitest.RequireProblem(t, put(f.Member.Access, own, map[string]any{"body": "after delete"}), 404, "NOT_FOUND", apitest.Reason("COMMENT_NOT_FOUND"))
	require.Equal(t, []string{"COMMENT_UPDATED", "COMMENT_DELETED"}, apitest.IssueAuditJobs(t, h, id), "refused edits are not audited")
}

// TestCommentDelete: the author or a project admin (role ADMIN, owner, organization
// ADMIN) soft-deletes; anyone else gets 403; a second delete is 404.
func TestCommentDelete(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	mate, admin, orgAdmin := h.Register("Mate"), h.Register("Adele"), h.Register("Orla")
	f.AddMember(t, mate, "MEMBER")
	f.AddMember(t, admin, "ADMIN")
	// orgAdmin has no member row: ADMIN comes from the organization alone.
	var org uuid.UUID
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "INSERT INTO organizations (name, slug) VALUES ('O', $1) RETURNING id",
		"cm-"+strings.ToLower(f.Key)).Scan(&org))
	_, err := h.DB.Pool.Exec(context.Background(), "INSERT INTO organization_members (org_id, user_id, role) VALUES ($1, $2, 'ADMIN')", org, orgAdmin.ID)
	require.NoError(t, err)
	_, err = h.DB.Pool.Exec(context.Background(), "UPDATE projects SET org_id = $1 WHERE id = $2", org, f.ProjectID)
	require.NoError(t, err)

	key := f.Create(t, map[string]any{"title": "Delete me"})["key"].(string)
	del := func(id, token string) *apitest.Response { return h.Do("DELETE", cmPath(f, key, "/"+id), nil, token) }
	newComment := func() string { return cmPost(f, t, key, f.Member.Access, "by Mia")["id"].(string) }

	// Refused: another MEMBER, a VIEWER (even for their own comment, see below), an outsider.
	id := newComment()
	apitest.RequireProblem(t, del(id, mate.Access), 403, "FORBIDDEN", apitest.Reason("NOT_AUTHOR_OR_ADMIN"))
	apitest.RequireProblem(t, del(id, f.Viewer.Access), 403, "FORBIDDEN", apitest.NoReason)
	apitest.RequireProblem(t, del(id, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	apitest.RequireProblem(t, del("nope", f.Member.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM comments WHERE id = $1 AND deleted_at IS NULL", id))

	// The author: 204 without body; the row stays, hidden; the activity entry loses its
	// link and excerpt; again is 404.
	r := del(id, f.Member.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Empty(t, r.Body)
	require.Equal(t, 1, h.Count("SELECT count(*) FROM comments WHERE id = $1 AND deleted_at IS NOT NULL AND body = 'by Mia'", id))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM issue_activities WHERE issue_id = (SELECT issue_id FROM comments WHERE id = $1)
		AND type = 'COMMENT' AND comment_id IS NULL AND new_value IS NULL`, id))
	require.Zero(t, h.Count("SELECT count(*) FROM issue_activities WHERE comment_id = $1", id))
	require.Empty(t, cmIDs(cmList(f, t, key, f.Member.Access, "")))
	apitest.RequireProblem(t, del(id, f.Member.Access), 404, "NOT_FOUND", apitest.Reason("COMMENT_NOT_FOUND"))
	apitest.RequireProblem(t, del(id, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("COMMENT_NOT_FOUND"))

	// Project admins of every kind delete someone else's comment.
	for who, token := range map[string]string{"ADMIN member": admin.Access, "owner": f.Owner.Access, "organization ADMIN": orgAdmin.Access} {
		id := newComment()
		require.Equal(t, http.StatusNoContent, del(id, token).Status, who)
		require.Equal(t, 1, h.Count("SELECT count(*) FROM comments WHERE id = $1 AND deleted_at IS NOT NULL", id), who)
	}

	// A comment of another issue is not found through this one.
	other := f.Create(t, map[string]any{"title": "Other"})["key"].(string)
	elsewhere := cmPost(f, t, other, f.Member.Access, "elsewhere")["id"].(string)
	apitest.RequireProblem(t, del(elsewhere, f.Owner.Access), 404, "NOT_FOUND", apitest.Reason("COMMENT_NOT_FOUND"))

	// An author who is now a VIEWER has no WRITE and cannot delete.
	mine := cmPost(f, t, key, mate.Access, "mine")["id"].(string)
	require.Equal(t, http.StatusOK, h.Do("PATCH", f.Path("/members/"+mate.ID.String()), map[string]any{"role": "VIEWER"}, f.Owner.Access).Status)
	apitest.RequireProblem(t, del(mine, mate.Access), 403, "FORBIDDEN", apitest.NoReason)
	require.Equal(t, []string{mine}, cmIDs(cmList(f, t, key, mate.Access, "")))
}

// TestCommentListPagesStably inserts comments sharing one created_at (and a deleted
// one) straight into the table and pages through them at sizes 1, 2 and the default 5:
// every page is in created_at desc, id desc order, and together the pages hold every
// live comment exactly once.
func TestCommentListPagesStably(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	iss := f.Create(t, map[string]any{"title": "Busy"})
	issueID, key := iss["id"].(string), iss["key"].(string)
	type row struct {
		id string
		at time.Time
	}
	var want []row
	same := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	insert := func(at time.Time, deleted bool) string {
		var id string
		require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `INSERT INTO comments (issue_id, author_id, body, created_at, deleted_at)
			VALUES ($1, $2, 'same time', $3, CASE WHEN $4 THEN now() END) RETURNING id::text`, issueID, f.Member.ID, at, deleted).Scan(&id))
		if !deleted {
			want = append(want, row{id, at})
		}
		return id
	}
	for range 7 {
		insert(same, false)
	}
	insert(same, true)
	insert(same.Add(time.Hour), false)
	insert(same.Add(-time.Hour), false)
	insert(same.Add(-time.Hour), true)
	// Newest first; for equal times the larger id first (uuid order is its text order).
	order := func(a, b row) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	}
	slices.SortFunc(want, order)
	wantIDs := make([]string, len(want))
	for i, w := range want {
		wantIDs[i] = w.id
	}

	for _, size := range []int{1, 2, 5} {
		var got []string
		query := func(p int) string {
			if size == 5 {
				return "page=" + strconv.Itoa(p) // the default size
			}
			return "page=" + strconv.Itoa(p) + "&size=" + strconv.Itoa(size)
		}
		pages := (len(want) + size - 1) / size
		for p := 0; p < pages; p++ {
			m := cmList(f, t, key, f.Viewer.Access, query(p))
			require.EqualValues(t, p, m["number"])
			require.EqualValues(t, size, m["size"])
			require.EqualValues(t, len(want), m["totalElements"])
			require.EqualValues(t, pages, m["totalPages"])
			require.Equal(t, p == 0, m["first"])
			require.Equal(t, p == pages-1, m["last"])
			got = append(got, cmIDs(m)...)
		}
		require.Equal(t, wantIDs, got, "size %d", size)
		past := cmList(f, t, key, f.Viewer.Access, query(pages))
		require.Equal(t, []any{}, past["content"])
		require.EqualValues(t, len(want), past["totalElements"], "past the end the total is still right")
	}

	// The reply's members.
	first := cmList(f, t, key, f.Member.Access, "size=1")["content"].([]any)[0].(map[string]any)
	require.Equal(t, map[string]any{"id": wantIDs[0], "issueId": issueID, "authorId": f.Member.ID.String(), "authorName": "Mia",
		"body": "same time", "editedAt": nil, "deleted": false, "createdAt": "2026-03-01T13:00:00Z", "updatedAt": first["updatedAt"],
		"automated": false, "ruleId": nil}, first)

	// An issue without comments is an empty page; bad paging is 400; roles as everywhere.
	empty := cmList(f, t, f.Create(t, map[string]any{"title": "Silent"})["key"].(string), f.Viewer.Access, "")
	require.Equal(t, []any{}, empty["content"])
	require.EqualValues(t, 0, empty["totalElements"])
	require.EqualValues(t, 5, empty["size"])
	apitest.RequireProblem(t, h.Do("GET", cmPath(f, key, "?page=-1"), nil, f.Member.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_PAGE"))
	apitest.RequireProblem(t, h.Do("GET", cmPath(f, key, "?size=0"), nil, f.Member.Access), 400, "BAD_REQUEST", apitest.Reason("INVALID_PAGE"))
	require.EqualValues(t, 200, cmList(f, t, key, f.Member.Access, "size=500")["size"])
	apitest.RequireProblem(t, h.Do("GET", cmPath(f, key, ""), nil, f.Outsider.Access), 403, "FORBIDDEN", apitest.Reason("NOT_A_MEMBER"))
	apitest.RequireProblem(t, h.Do("GET", cmPath(f, f.Key+"-999", ""), nil, f.Member.Access), 404, "NOT_FOUND", apitest.Reason("ISSUE_NOT_FOUND"))
}

// TestCommentListQueryCount: the list costs the same statements for 1 comment as for
// 40 with authors: credential check, project access and one list statement.
func TestCommentListQueryCount(t *testing.T) {
	t.Parallel()
	h, counter := apitest.CountingHarness(t)
	f := apitest.NewProject(t, h)
	key := f.Create(t, map[string]any{"title": "Counted"})["key"].(string)
	count := func(path string) int64 {
		before := counter.N.Load()
		r := h.Do("GET", path, nil, f.Viewer.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		return counter.N.Load() - before
	}
	cmPost(f, t, key, f.Member.Access, "one")
	one := count(cmPath(f, key, "?size=50"))
	for i := range 39 {
		cmPost(f, t, key, []string{f.Member.Access, f.Owner.Access}[i%2], "more")
	}
	require.Len(t, cmList(f, t, key, f.Viewer.Access, "size=50")["content"], 40)
	require.Equal(t, one, count(cmPath(f, key, "?size=50")))
	require.Equal(t, int64(3), one, "credential check, project access, the page with its total")
}

// TestSystemComment: a comment without author (automation, later) is stored and
// published, but writes no activity entry (activity skips system comments:
// docs/api-conventions.md#comments-activity-and-attachments) and mentions even the people
// a user's comment would exclude.
func TestSystemComment(t *testing.T) {
	t.Parallel()
	h := apitest.WebhookHarness(t)
	events := cmCapture(h)
	f := apitest.NewProject(t, h)
	wh, _ := apitest.CreateWebhook(t, h, f.Key, f.Owner.Access, map[string]any{"url": apitest.PublicWebhookURL, "events": []string{"comment.created"}})
	iss := f.Create(t, map[string]any{"title": "Automated"})
	svc := comment.NewService(h.DB, h.Server.Bus(), nil)
	v, err := svc.Create(context.Background(), issue.Project{ID: f.ProjectID, Key: f.Key}, nil,
		issue.Ref{Key: iss["key"].(string)}, "<p>Escalated to @mia</p>")
	require.NoError(t, err)
	require.Nil(t, v.AuthorID)
	require.Nil(t, v.AuthorName)

	require.Zero(t, h.Count("SELECT count(*) FROM issue_activities WHERE issue_id = $1 AND type = 'COMMENT'", iss["id"]))
	require.Equal(t, 1, h.Count("SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1 AND event_type = 'comment.created'", wh["id"]))
	evs := events.all()
	require.Len(t, evs, 1)
	require.Nil(t, evs[0].By.ID)
	require.Equal(t, []uuid.UUID{f.Member.ID}, evs[0].Mentioned)

	listed := cmList(f, t, iss["key"].(string), f.Viewer.Access, "")["content"].([]any)[0].(map[string]any)
	require.Nil(t, listed["authorId"])
	require.Nil(t, listed["authorName"])
	// Nobody is its author: only a project admin deletes it.
	apitest.RequireProblem(t, h.Do("PUT", cmPath(f, iss["key"].(string), "/"+v.ID.String()), map[string]any{"body": "x"}, f.Owner.Access), 403, "FORBIDDEN", apitest.Reason("NOT_AUTHOR"))
	apitest.RequireProblem(t, h.Do("DELETE", cmPath(f, iss["key"].(string), "/"+v.ID.String()), nil, f.Member.Access), 403, "FORBIDDEN", apitest.Reason("NOT_AUTHOR_OR_ADMIN"))
	require.Equal(t, http.StatusNoContent, h.Do("DELETE", cmPath(f, iss["key"].(string), "/"+v.ID.String()), nil, f.Owner.Access).Status)
}
