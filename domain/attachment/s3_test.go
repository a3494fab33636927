package attachment_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/attachment/s3test"
)

// TestS3StorageRoundTrip: through minio-go against an S3 protocol peer, a file put in
// several multipart parts reads back whole and by range, under the prefix, and is gone
// after Remove; names not of the generated form never reach the bucket.
func TestS3StorageRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := s3test.New(t)
	cfg := fake.Config("files", "tw/att")
	cfg.PartSize = 5 << 20
	st := fake.Storage(t, cfg)
	require.Equal(t, attachment.LocationS3, st.Location())

	name := attachment.NewStoredName("big.bin")
	content := strings.Repeat("0123456789abcdef", (12<<20)/16) // 12 MiB: three parts
	n, err := st.Put(ctx, name, strings.NewReader(content))
	require.NoError(t, err)
	require.EqualValues(t, len(content), n)
	require.Equal(t, []string{"tw/att/" + name}, fake.Keys(t, "files"))
	require.GreaterOrEqual(t, fake.Puts.Load(), int64(3), "a multipart upload, one PUT per part")

	r, size, err := st.Open(ctx, name)
	require.NoError(t, err)
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.EqualValues(t, len(content), size)
	require.Equal(t, content, string(got))

	r, err = st.OpenRange(ctx, name, 6<<20, 10)
	require.NoError(t, err)
	got, err = io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.Equal(t, content[6<<20:6<<20+10], string(got))

	require.NoError(t, st.Remove(ctx, name))
	_, _, err = st.Open(ctx, name)
	require.ErrorIs(t, err, attachment.ErrFileNotFound)
	require.Empty(t, fake.Keys(t, "files"))
	require.NoError(t, st.Remove(ctx, name), "a missing object counts as removed")

	for _, bad := range []string{"../x", "a/b", ""} {
		_, err := st.Put(ctx, bad, strings.NewReader("x"))
		require.ErrorIs(t, err, attachment.ErrFileNotFound)
		_, _, err = st.Open(ctx, bad)
		require.ErrorIs(t, err, attachment.ErrFileNotFound)
	}
}

// TestS3FailedPutLeavesNothing: a reader that fails mid-upload (after a part went up)
// aborts the multipart upload: no object, no incomplete upload.
func TestS3FailedPutLeavesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := s3test.New(t)
	st := fake.Storage(t, fake.Config("files", ""))
	broken := errors.New("client went away")
	name := attachment.NewStoredName("x.bin")
	_, err := st.Put(ctx, name, io.MultiReader(strings.NewReader(strings.Repeat("x", 6<<20)), failing{broken}))
	require.ErrorIs(t, err, broken)
	require.Empty(t, fake.Keys(t, "files"))
	n, err := st.RemoveStalePartials(ctx, 0)
	require.NoError(t, err)
	require.Zero(t, n, "the failed upload was aborted already")
}

type failing struct{ err error }

func (f failing) Read([]byte) (int, error) { return 0, f.err }

// TestS3StalePartialsAborted: an incomplete multipart upload (a process died
// mid-upload) is aborted once it is older than the age given, not before.
func TestS3StalePartialsAborted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := s3test.New(t)
	cfg := fake.Config("files", "p")
	st := fake.Storage(t, cfg)
	core := s3test.Core(t, cfg)
	_, err := core.NewMultipartUpload(ctx, "files", "p/"+attachment.NewStoredName("a.bin"), s3test.PutOptions())
	require.NoError(t, err)
	n, err := st.RemoveStalePartials(ctx, time.Hour)
	require.NoError(t, err)
	require.Zero(t, n, "a young upload may still be running")
	n, err = st.RemoveStalePartials(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = st.RemoveStalePartials(ctx, 0)
	require.NoError(t, err)
	require.Zero(t, n)
}

// TestS3MissingBucket: a missing bucket is a clear start-up error unless CreateBucket
// is set; an unreachable one fails Check.
func TestS3MissingBucket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := s3test.New(t)
	cfg := fake.Config("absent", "")
	cfg.CreateBucket = false
	_, err := attachment.NewS3(ctx, cfg)
	require.ErrorIs(t, err, attachment.ErrNoBucket)
	require.Contains(t, err.Error(), "TW_S3_CREATE_BUCKET")

	cfg.CreateBucket = true
	st, err := attachment.NewS3(ctx, cfg)
	require.NoError(t, err)
	require.NoError(t, st.Check(ctx))
	fake.Down.Store(true)
	require.Error(t, st.Check(ctx))
}

// TestS3Presign: with presigning on, the address is a GET of the object, signed for at
// most five minutes, carrying the response headers; the fake answers it with the bytes.
func TestS3Presign(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := s3test.New(t)
	cfg := fake.Config("files", "")
	off := fake.Storage(t, cfg)
	name := attachment.NewStoredName("r.txt")
	_, err := off.Put(ctx, name, strings.NewReader("presigned bytes"))
	require.NoError(t, err)
	_, ok, err := off.PresignGet(ctx, name, time.Minute, "text/plain", `attachment; filename="r.txt"`)
	require.NoError(t, err)
	require.False(t, ok, "presigning is off unless asked for")

	cfg.Presign = true
	on := fake.Storage(t, cfg)
	raw, ok, err := on.PresignGet(ctx, name, time.Hour, "text/plain", `attachment; filename="r.txt"`)
	require.NoError(t, err)
	require.True(t, ok)
	u, err := url.Parse(raw)
	require.NoError(t, err)
	require.Equal(t, "300", u.Query().Get("X-Amz-Expires"), "capped at five minutes")
	require.Equal(t, `attachment; filename="r.txt"`, u.Query().Get("response-content-disposition"))
	resp, err := http.Get(raw)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "presigned bytes", string(body))
}
