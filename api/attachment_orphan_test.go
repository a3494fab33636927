package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/attachment"
)

// TestDeletedFilesGoAfterTheGrace: a deleted attachment's file, and the files of a
// deleted issue's attachments and its subtasks', stay in storage (unreachable) until the
// sweep after the deletion grace removes them; files of other issues stay. So a backup
// whose files are copied after its dump has the file of every row the dump holds.
func TestDeletedFilesGoAfterTheGrace(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Configure: func(s *api.Settings) { s.AttachmentDeleteGrace = time.Hour }})
	f := atFixtureOn(t, h) // a database and a storage directory of its own
	first := f.uploaded(t, f.Member.Access, "a.txt", "text/plain", "first")
	single := f.uploaded(t, f.Member.Access, "b.txt", "text/plain", "second")
	r := f.H.Do("DELETE", f.at("/"+single["id"].(string)), nil, f.Member.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM attachment_orphans"), "an explicit delete queues its file")

	sub := f.Create(t, map[string]any{"title": "Part", "type": "SUBTASK", "parentId": f.issueID})
	subFile := atFixture{Project: f.Project, issueID: sub["id"].(string), issueKey: sub["key"].(string), dir: f.dir}
	subFile.uploaded(t, f.Member.Access, "c.txt", "text/plain", "third")
	other := f.Create(t, map[string]any{"title": "Keeps its file"})
	otherFile := atFixture{Project: f.Project, issueID: other["id"].(string), issueKey: other["key"].(string), dir: f.dir}
	kept := otherFile.uploaded(t, f.Member.Access, "d.txt", "text/plain", "fourth")
	keptName := f.storedName(t, kept["id"])
	require.NotEmpty(t, f.storedName(t, first["id"]))
	r = f.H.Do("DELETE", f.Path("/issues/"+f.issueKey), nil, f.Owner.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Len(t, f.files(t), 4, "every file stays through the grace")
	require.Equal(t, 3, f.H.Count("SELECT count(*) FROM attachment_orphans"))

	n, err := h.Server.SweepAttachments(context.Background())
	require.NoError(t, err)
	require.Zero(t, n, "within the grace nothing goes")
	require.Len(t, f.files(t), 4)

	_, err = h.DB.Pool.Exec(context.Background(), "UPDATE attachment_orphans SET created_at = now() - interval '61 minutes'")
	require.NoError(t, err)
	n, err = h.Server.SweepAttachments(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Equal(t, []string{keptName}, f.files(t), "files of the deleted rows removed after the grace")
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM attachment_orphans"), "the queue is emptied")
}

// TestOrphanedFileThatCannotBeRemovedStaysQueued: when the storage refuses the removal,
// the sweep leaves the file queued; the next sweep removes it.
func TestOrphanedFileThatCannotBeRemovedStaysQueued(t *testing.T) {
	t.Parallel()
	flaky := &atFlakyStorage{}
	h := apitest.New(t, apitest.Options{AttachmentStorage: func(local attachment.Storage) attachment.Storage {
		flaky.Storage = local
		return flaky
	}})
	f := atFixtureOn(t, h)
	f.uploaded(t, f.Member.Access, "stuck.txt", "text/plain", "data")
	flaky.failRemove.Store(true)
	require.Equal(t, http.StatusNoContent, f.H.Do("DELETE", f.Path("/issues/"+f.issueKey), nil, f.Owner.Access).Status)
	n, err := h.Server.SweepAttachments(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
	require.Len(t, f.files(t), 1, "the file could not be removed")
	require.Equal(t, 1, f.H.Count("SELECT count(*) FROM attachment_orphans"), "and stays queued")

	flaky.failRemove.Store(false)
	n, err = h.Server.SweepAttachments(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Empty(t, f.files(t))
	require.Equal(t, 0, f.H.Count("SELECT count(*) FROM attachment_orphans"))
}
