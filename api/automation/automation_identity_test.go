package automation_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/store"
)

// TestAutomationSpeaksAsItself: what a rule writes is the built-in automation user's,
// never a member's: the comment's author (authorId, authorName) with automated and
// ruleId in the reply; the mentions in it notify as "Automation" (the reporter too,
// who was the author before and so was never told); the field change's activity entry
// names the rule and its creator; the audit rows name them in their details.
func TestAutomationSpeaksAsItself(t *testing.T) {
	t.Parallel()
	f := autoFixture(t)
	h := f.H
	apitest.SetAuditLevel(t, h, "WRITE", true)
	rule := autoRule(f.Project, t, map[string]any{"name": "Greeter", "triggerType": "ISSUE_CREATED",
		"actions": []any{autoAction("CREATE_COMMENT", map[string]any{"body": "Hello @mia, @viv will look"}),
			autoAction("SET_PRIORITY", map[string]any{"priority": "HIGH"})}})
	ruleID := rule["id"].(string)
	auto := store.AutomationUserID.String()

	_, key := autoIssue(f.Project, t, f.Member, map[string]any{"title": "Reported by Mia"})
	autoDrain(t, h)

	r := h.Do("GET", f.Path("/issues/"+key+"/comments"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	c := r.JSON(t)["content"].([]any)[0].(map[string]any)
	require.Equal(t, auto, c["authorId"])
	require.Equal(t, "Automation", c["authorName"])
	require.Equal(t, true, c["automated"])
	require.Equal(t, ruleID, c["ruleId"])

	for _, u := range []apitest.User{f.Member, f.Viewer} {
		var title string
		require.NoError(t, h.DB.Pool.QueryRow(context.Background(), `SELECT title FROM notifications
			WHERE user_id = $1 AND type = 'COMMENT_MENTION' AND issue_key = $2`, u.ID, key).Scan(&title), u.Email)
		require.Equal(t, "Automation mentioned you on "+key, title)
	}

	r = h.Do("GET", f.Path("/issues/"+key+"/activity"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var changed map[string]any
	for _, a := range r.JSON(t)["content"].([]any) {
		if a := a.(map[string]any); a["type"] == "PRIORITY_CHANGED" {
			changed = a
		}
	}
	require.NotNil(t, changed, "%s", r.Body)
	require.Equal(t, auto, changed["actorId"])
	require.Equal(t, "Automation", changed["actorName"])
	require.Equal(t, true, changed["automated"])
	require.Equal(t, ruleID, changed["ruleId"])
	require.Equal(t, "Greeter", changed["ruleName"])
	require.Equal(t, f.Owner.ID.String(), changed["ruleCreatorId"])

	for _, action := range []string{"ISSUE_UPDATED", "COMMENT_CREATED", "AUTOMATION_FIRED"} {
		require.Equal(t, 1, h.Count(`SELECT count(*) FROM audit_events WHERE action = $1
			AND details::jsonb->'automation'->>'ruleId' = $2 AND details::jsonb->'automation'->>'creatorId' = $3
			AND details::jsonb->'automation'->>'ruleName' = 'Greeter'`, action, ruleID, f.Owner.ID.String()), action)
	}
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM audit_events WHERE action = 'ISSUE_UPDATED' AND user_id = $1
		AND user_email = 'automation'`, auto))
}

// TestAutomationUserIsNoAccount: the built-in automation user cannot sign in, is in no
// list of accounts and cannot be made a member; it does not count as the first account
// (the first person to register is still ADMIN).
func TestAutomationUserIsNoAccount(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	first := h.Register("Ada")
	require.Equal(t, "ADMIN", h.Do("GET", "/api/v1/auth/me", nil, first.Access).JSON(t)["role"])
	f := apitest.NewProject(t, h)

	var email string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT email FROM users WHERE id = $1", store.AutomationUserID).Scan(&email))
	r := h.Do("POST", "/api/v1/auth/login", map[string]any{"email": email, "password": apitest.Password}, "")
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	require.Equal(t, "INVALID_CREDENTIALS", r.JSON(t)["reason"])

	for _, u := range h.Do("GET", "/api/v1/admin/users", nil, first.Access).Array(t) {
		require.NotEqual(t, store.AutomationUserID.String(), u.(map[string]any)["id"])
	}
	r = h.Do("GET", "/api/v1/users/search?q=automation", nil, first.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Empty(t, r.Array(t))
	r = h.Do("POST", f.Path("/members"), map[string]any{"userId": store.AutomationUserID, "role": "MEMBER"}, f.Owner.Access)
	require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	r = h.Do("POST", "/api/v1/admin/users/"+store.AutomationUserID.String()+"/activate", nil, first.Access)
	require.NotEqual(t, http.StatusOK, r.Status, "%s", r.Body)
	require.NotEqual(t, http.StatusNoContent, r.Status, "%s", r.Body)
}
