package account_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// TestCommentThroughTheAPINotifies is the whole path: a comment posted through the
// comments API, with mentions resolved there, reaches the workers as comment.created and
// becomes one COMMENT_MENTION per mentioned member and a COMMENT_ADDED for the reporter,
// nothing for the author; the comment.created webhook delivery is queued beside them.
func TestCommentThroughTheAPINotifies(t *testing.T) {
	t.Parallel()
	f := apitest.NotifyProject(t, nil)
	h := f.H
	_, key := apitest.NotifyIssue(t, f, f.Owner, "Talk", nil) // reporter: owner, no assignee
	hook := h.Do("POST", f.Path("/webhooks"), map[string]any{"url": "http://[3ffe::10]/hook",
		"events": []string{"comment.created"}}, f.Owner.Access)
	require.Equal(t, http.StatusCreated, hook.Status, "%s", hook.Body)

	// The member mentions the viewer twice (two spellings) and themselves.
	r := h.Do("POST", f.Path("/issues/"+key+"/comments"), map[string]any{"body": "@viv, please look. cc @VIV @Mia"}, f.Member.Access)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	commentID := r.JSON(t)["id"].(string)
	apitest.DrainJobs(t, h)

	require.Equal(t, []string{"COMMENT_MENTION " + key}, apitest.NotificationTypes(t, h, f.Viewer))
	require.Equal(t, []string{"COMMENT_ADDED " + key}, apitest.NotificationTypes(t, h, f.Owner))
	require.Empty(t, apitest.NotificationTypes(t, h, f.Member), "nobody is notified of their own comment")
	require.Equal(t, "Mia mentioned you on "+key, apitest.FindNotification(t, h, f.Viewer, "COMMENT_MENTION", key)["title"])
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM webhook_deliveries WHERE event_type = 'comment.created'
		AND payload::jsonb->'data'->>'commentId' = $1`, commentID))
}
