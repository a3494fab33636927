package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/attachment"
)

// TestDeletingAnIssueRemovesItsFiles: the files of an issue's attachments, and of its
// subtasks', are removed from the storage once the issue's deletion commits; an
// attachment deleted on its own leaves nothing queued; files of other issues stay.
func TestDeletingAnIssueRemovesItsFiles(t *testing.T) {
	t.Parallel()
	f := atFixtureOn(t, apitest.New(t, apitest.Options{})) // a storage directory of its own
	f.uploaded(t, f.member.Access, "a.txt", "text/plain", "first")
	single := f.uploaded(t, f.member.Access, "b.txt", "text/plain", "second")
	r := f.h.Do("DELETE", f.at("/"+single["id"].(string)), nil, f.member.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Equal(t, 0, f.h.Count("SELECT count(*) FROM attachment_orphans"), "an explicit delete removes its own file")

	sub := f.create(t, map[string]any{"title": "Part", "type": "SUBTASK", "parentId": f.issueID})
	subFile := atFixture{issueFixture: f.issueFixture, issueID: sub["id"].(string), issueKey: sub["key"].(string), dir: f.dir}
	subFile.uploaded(t, f.member.Access, "c.txt", "text/plain", "third")
	other := f.create(t, map[string]any{"title": "Keeps its file"})
	otherFile := atFixture{issueFixture: f.issueFixture, issueID: other["id"].(string), issueKey: other["key"].(string), dir: f.dir}
	kept := otherFile.uploaded(t, f.member.Access, "d.txt", "text/plain", "fourth")
	require.Len(t, f.files(t), 3)

	r = f.h.Do("DELETE", f.path("/issues/"+f.issueKey), nil, f.owner.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	require.Equal(t, []string{f.storedName(t, kept["id"])}, f.files(t), "files of the deleted issue and its subtask removed")
	require.Equal(t, 0, f.h.Count("SELECT count(*) FROM attachment_orphans"), "the orphan queue is emptied")
}

// TestOrphanedFileThatCannotBeRemovedStaysQueued: when the storage refuses the removal,
// the issue's deletion still succeeds and the file stays queued; the next issue
// deletion's sweep removes it.
func TestOrphanedFileThatCannotBeRemovedStaysQueued(t *testing.T) {
	t.Parallel()
	flaky := &atFlakyStorage{}
	h := apitest.New(t, apitest.Options{AttachmentStorage: func(local attachment.Storage) attachment.Storage {
		flaky.Storage = local
		return flaky
	}})
	f := atFixtureOn(t, h)
	f.uploaded(t, f.member.Access, "stuck.txt", "text/plain", "data")
	flaky.failRemove.Store(true)
	require.Equal(t, http.StatusNoContent, f.h.Do("DELETE", f.path("/issues/"+f.issueKey), nil, f.owner.Access).Status)
	require.Len(t, f.files(t), 1, "the file could not be removed")
	require.Equal(t, 1, f.h.Count("SELECT count(*) FROM attachment_orphans"), "and stays queued")

	flaky.failRemove.Store(false)
	next := f.create(t, map[string]any{"title": "Next"})
	require.Equal(t, http.StatusNoContent, f.h.Do("DELETE", f.path("/issues/"+next["key"].(string)), nil, f.owner.Access).Status)
	require.Empty(t, f.files(t))
	require.Equal(t, 0, f.h.Count("SELECT count(*) FROM attachment_orphans"))
}
