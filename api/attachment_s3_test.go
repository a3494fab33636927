package api_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/attachment/s3test"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// atS3 is a harness whose uploads go to the bucket of cfg (a storage of its own, as a
// separate API process would have) on db, with its own local directory.
func atS3(t *testing.T, db *store.DB, cfg attachment.S3Config, more ...func(*api.Settings)) *apitest.Harness {
	t.Helper()
	bucket, err := attachment.NewS3(context.Background(), cfg)
	require.NoError(t, err)
	return apitest.New(t, apitest.Options{DB: db, Configure: func(s *api.Settings) {
		s.AttachmentStorage = bucket
		for _, m := range more {
			m(s)
		}
	}})
}

// TestS3AttachmentLifecycle: with the bucket storage, an upload is an object under the
// prefix and a row saying s3, nothing on the local disk; the download streams it whole
// and by range with today's headers; a delete leaves the object through the grace and
// the sweep removes it then.
func TestS3AttachmentLifecycle(t *testing.T) {
	t.Parallel()
	fake := s3test.New(t)
	h := atS3(t, storetest.NewDB(t), fake.Config("files", "tw"),
		func(s *api.Settings) { s.AttachmentDeleteGrace = time.Hour })
	f := atFixtureOn(t, h)

	content := strings.Repeat("0123456789", 1000)
	a := f.uploaded(t, f.Member.Access, "Notes.TXT", "text/plain", content)
	name := f.storedName(t, a["id"])
	require.Equal(t, []string{"tw/" + name}, fake.Keys(t, "files"))
	require.Empty(t, f.files(t), "nothing on the local disk")
	require.Equal(t, 1, h.Count("SELECT count(*) FROM attachments WHERE id = $1 AND storage = 's3'", a["id"]))
	require.Equal(t, 0, h.Count("SELECT count(*) FROM attachment_orphans"), "the upload's queue entry went with its commit")

	d := f.H.Do("GET", f.at("/"+a["id"].(string)+"/download"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusOK, d.Status, "%s", d.Body)
	require.Equal(t, content, string(d.Body))
	require.Equal(t, "text/plain", d.Header.Get("Content-Type"))
	require.Equal(t, `attachment; filename="Notes.TXT"`, d.Header.Get("Content-Disposition"))
	require.Equal(t, "nosniff", d.Header.Get("X-Content-Type-Options"))
	require.Equal(t, "bytes", d.Header.Get("Accept-Ranges"))

	for _, c := range []struct{ rng, want, contentRange string }{
		{"bytes=10-19", content[10:20], "bytes 10-19/10000"},
		{"bytes=9995-", content[9995:], "bytes 9995-9999/10000"},
		{"bytes=-3", content[9997:], "bytes 9997-9999/10000"},
		{"bytes=9990-20000", content[9990:], "bytes 9990-9999/10000"},
	} {
		d := f.H.Do("GET", f.at("/"+a["id"].(string)+"/download"), nil, f.Viewer.Access, "Range", c.rng)
		require.Equal(t, http.StatusPartialContent, d.Status, "%s: %s", c.rng, d.Body)
		require.Equal(t, c.want, string(d.Body), c.rng)
		require.Equal(t, c.contentRange, d.Header.Get("Content-Range"), c.rng)
	}
	d = f.H.Do("GET", f.at("/"+a["id"].(string)+"/download"), nil, f.Viewer.Access, "Range", "bytes=10000-")
	apitest.RequireProblem(t, d, http.StatusRequestedRangeNotSatisfiable, "BAD_REQUEST", apitest.Reason("RANGE_NOT_SATISFIABLE"))
	require.Equal(t, "bytes */10000", d.Header.Get("Content-Range"))
	d = f.H.Do("GET", f.at("/"+a["id"].(string)+"/download"), nil, f.Viewer.Access, "Range", "bytes=0-1,5-6")
	require.Equal(t, http.StatusOK, d.Status, "several ranges: the whole file")
	require.Equal(t, content, string(d.Body))

	r := f.H.Do("DELETE", f.at("/"+a["id"].(string)), nil, f.Member.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	n, err := h.Server.SweepAttachments(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
	require.Len(t, fake.Keys(t, "files"), 1, "the object stays through the grace")
	_, err = h.DB.Pool.Exec(context.Background(), "UPDATE attachment_orphans SET created_at = now() - interval '61 minutes'")
	require.NoError(t, err)
	n, err = h.Server.SweepAttachments(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Empty(t, fake.Keys(t, "files"), "the sweep removed the object")
}

// TestS3FailedUploadsLeaveNothing: an upload over the limit or refused at commit
// leaves no row and no object; an object of an upload whose process died before its
// row committed (its queue entry outlives it) is removed by the sweep.
func TestS3FailedUploadsLeaveNothing(t *testing.T) {
	t.Parallel()
	fake := s3test.New(t)
	h := atS3(t, storetest.NewDB(t), fake.Config("files", ""), func(s *api.Settings) { s.MaxUploadBytes = 6 << 20 })
	f := atFixtureOn(t, h)
	r := f.upload(t, f.Member.Access, atFile("big.bin", "", strings.Repeat("b", 7<<20)))
	apitest.RequireProblem(t, r, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", apitest.Reason("FILE_TOO_LARGE"))
	r = f.upload(t, f.Member.Access, atFile("", "", "no name"))
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.Empty(t, fake.Keys(t, "files"))
	require.Zero(t, f.rows())
	require.Equal(t, 0, h.Count("SELECT count(*) FROM attachment_orphans"))

	// A process that died between the object and the row: its queue entry remains.
	bucket := fake.Storage(t, fake.Config("files", ""))
	name := attachment.NewStoredName("lost.bin")
	_, err := bucket.Put(context.Background(), name, strings.NewReader("lost"))
	require.NoError(t, err)
	_, err = h.DB.Pool.Exec(context.Background(), "INSERT INTO attachment_orphans (stored_name, storage, upload, created_at) VALUES ($1, 's3', true, now() - interval '30 minutes')", name)
	require.NoError(t, err)
	n, err := h.Server.SweepAttachments(context.Background())
	require.NoError(t, err)
	require.Zero(t, n, "an upload may still be running for up to an hour")
	_, err = h.DB.Pool.Exec(context.Background(), "UPDATE attachment_orphans SET created_at = now() - interval '61 minutes'")
	require.NoError(t, err)
	n, err = h.Server.SweepAttachments(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Empty(t, fake.Keys(t, "files"))
}

// TestS3TwoAPIProcesses: two API servers on one database, each with a local directory
// of its own and its own client of the bucket, serve each other's uploads.
func TestS3TwoAPIProcesses(t *testing.T) {
	t.Parallel()
	fake := s3test.New(t)
	db := storetest.PackageDB(t)
	h1 := atS3(t, db, fake.Config("shared", ""))
	h2 := atS3(t, db, fake.Config("shared", ""))
	require.NotEqual(t, h1.Settings.AttachmentsDir, h2.Settings.AttachmentsDir)
	f1 := atFixtureOn(t, h1)
	f2 := *f1
	f2.Project = &apitest.Project{}
	*f2.Project = *f1.Project
	f2.H = h2
	f2.dir = h2.Settings.AttachmentsDir

	one := f1.uploaded(t, f1.Member.Access, "one.txt", "text/plain", "uploaded through the first")
	two := f2.uploaded(t, f2.Member.Access, "two.txt", "text/plain", "uploaded through the second")
	d := f2.H.Do("GET", f2.at("/"+one["id"].(string)+"/download"), nil, f2.Member.Access)
	require.Equal(t, http.StatusOK, d.Status, "%s", d.Body)
	require.Equal(t, "uploaded through the first", string(d.Body))
	d = f1.H.Do("GET", f1.at("/"+two["id"].(string)+"/download"), nil, f1.Member.Access, "Range", "bytes=0-7")
	require.Equal(t, http.StatusPartialContent, d.Status, "%s", d.Body)
	require.Equal(t, "uploaded", string(d.Body))
	require.Empty(t, f1.files(t))
	require.Empty(t, f2.files(t))
	require.Len(t, fake.Keys(t, "shared"), 2)
}

// TestS3PresignedDownload: with TW_S3_PRESIGN the download is a 302 to a presigned GET
// valid for five minutes, after the same authorization (a stranger still gets 403); the
// address answers the bytes.
func TestS3PresignedDownload(t *testing.T) {
	t.Parallel()
	fake := s3test.New(t)
	cfg := fake.Config("files", "")
	cfg.Presign = true
	h := atS3(t, storetest.PackageDB(t), cfg)
	f := atFixtureOn(t, h)
	a := f.uploaded(t, f.Member.Access, "r.txt", "text/plain", "presigned")
	d := f.H.Do("GET", f.at("/"+a["id"].(string)+"/download"), nil, f.Viewer.Access)
	require.Equal(t, http.StatusFound, d.Status, "%s", d.Body)
	loc, err := url.Parse(d.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "300", loc.Query().Get("X-Amz-Expires"))
	require.Equal(t, `attachment; filename="r.txt"`, loc.Query().Get("response-content-disposition"))
	resp, err := http.Get(loc.String())
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	d = f.H.Do("GET", f.at("/"+a["id"].(string)+"/download"), nil, f.Outsider.Access)
	require.Equal(t, http.StatusForbidden, d.Status, "%s", d.Body)
	require.Empty(t, d.Header.Get("Location"))
}

// TestS3ReadyzReportsTheBucket: /readyz answers 503 while the bucket does not answer,
// and 200 again once it does.
func TestS3ReadyzReportsTheBucket(t *testing.T) {
	t.Parallel()
	fake := s3test.New(t)
	h := atS3(t, storetest.PackageDB(t), fake.Config("files", ""))
	require.Equal(t, http.StatusOK, h.Do("GET", "/readyz", nil, "").Status)
	fake.Down.Store(true)
	r := h.Do("GET", "/readyz", nil, "")
	require.Equal(t, http.StatusServiceUnavailable, r.Status)
	require.Equal(t, "DOWN", r.JSON(t)["status"])
	fake.Down.Store(false)
	require.Equal(t, http.StatusOK, h.Do("GET", "/readyz", nil, "").Status)
}
