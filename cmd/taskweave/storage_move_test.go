package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/attachment/s3test"
	"github.com/taskweave/taskweave/domain/pipeline"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store/storetest"
	"github.com/taskweave/taskweave/workers"
)

// gatedBucket passes the first allow puts through and holds every later one until its
// context ends, as a worker killed mid-copy would; puts counts the puts that reached
// the bucket.
type gatedBucket struct {
	attachment.Storage
	allow   int64
	puts    atomic.Int64
	blocked chan struct{}
}

func (g *gatedBucket) Put(ctx context.Context, name string, r io.Reader) (int64, error) {
	if g.allow >= 0 && g.puts.Load() >= g.allow {
		select {
		case g.blocked <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return 0, ctx.Err()
	}
	g.puts.Add(1)
	return g.Storage.Put(ctx, name, r)
}

// moveClient starts a worker client with files as its storages.
func moveClient(t *testing.T, h *apitest.Harness, files *attachment.Stores) *river.Client[pgx.Tx] {
	t.Helper()
	inserter, err := jobs.NewInserter(h.DB.SQL, nil)
	require.NoError(t, err)
	client, err := workers.NewClient(workers.Config{Concurrency: 2}, workers.Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: h.DB, Registry: prometheus.NewRegistry(),
		Bus: pipeline.New(inserter, pipeline.Config{}).Bus, Attachments: files})
	require.NoError(t, err)
	require.NoError(t, client.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(ctx)
	})
	return client
}

// TestStorageMigrateResumesAfterAKill (workers.StorageMigrateWorker; here because workers
// tests may not import the API harness): the move copies the disk's files to the bucket
// and switches their rows, with its progress in the job's output while it runs. A worker
// stopped hard in the middle (the fourth copy cut off) leaves three rows moved; the
// next worker continues with the other five only; a second move copies nothing. The
// moved files download from an API that has the bucket and not the disk.
func TestStorageMigrateResumesAfterAKill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := s3test.New(t)
	h := apitest.New(t, apitest.Options{DB: storetest.NewDB(t)})
	admin := h.Register("admin")
	h.MakeAdmin(admin)
	require.Equal(t, http.StatusCreated, h.Do("POST", "/api/v1/projects", map[string]any{"key": "MOV", "name": "Move"}, admin.Access).Status)
	issue := h.Do("POST", "/api/v1/projects/MOV/issues", map[string]any{"title": "files"}, admin.Access).JSON(t)["key"].(string)
	ids := make([]string, 8)
	for i := range ids {
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		part, err := w.CreateFormFile("file", fmt.Sprintf("f%d.txt", i))
		require.NoError(t, err)
		_, _ = fmt.Fprintf(part, "file number %d", i)
		require.NoError(t, w.Close())
		r := h.Do("POST", "/api/v1/projects/MOV/issues/"+issue+"/attachments", body.Bytes(), admin.Access, "Content-Type", w.FormDataContentType())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		ids[i] = r.JSON(t)["id"].(string)
	}
	require.Equal(t, 8, h.Count("SELECT count(*) FROM attachments WHERE storage = 'disk'"))

	local, err := attachment.NewLocal(h.Settings.AttachmentsDir)
	require.NoError(t, err)
	cfg := fake.Config("moved", "")
	gated := &gatedBucket{Storage: fake.Storage(t, cfg), allow: 3, blocked: make(chan struct{}, 1)}
	inserter, err := jobs.NewInserter(h.DB.SQL, nil)
	require.NoError(t, err)
	res, err := inserter.Insert(ctx, jobs.StorageMigrate{}, nil)
	require.NoError(t, err)
	jobID := res.Job.ID
	again, err := inserter.Insert(ctx, jobs.StorageMigrate{}, nil)
	require.NoError(t, err)
	require.True(t, again.UniqueSkippedAsDuplicate, "one move at a time")

	first := moveClient(t, h, attachment.NewStores(gated, local))
	select {
	case <-gated.blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("the move never reached its fourth copy")
	}
	output := func() map[string]any {
		r := h.Do("GET", fmt.Sprintf("/api/v1/admin/jobs/%d", jobID), nil, admin.Access)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		meta, _ := r.JSON(t)["metadata"].(map[string]any)
		out, _ := meta["output"].(map[string]any)
		return out
	}
	progress := output()
	require.EqualValues(t, 8, progress["total"], "progress while it runs: %v", progress)
	require.EqualValues(t, 3, progress["done"])
	require.EqualValues(t, 0, progress["failed"])
	require.Equal(t, 3, h.Count("SELECT count(*) FROM attachments WHERE storage = 's3'"))

	stop, cancel := context.WithTimeout(ctx, 10*time.Second)
	require.NoError(t, first.StopAndCancel(stop), "killed in the middle")
	cancel()
	require.Equal(t, 3, h.Count("SELECT count(*) FROM attachments WHERE storage = 's3'"))
	require.NotEqual(t, "completed", jobState(t, h, jobID))

	counted := &gatedBucket{Storage: fake.Storage(t, cfg), allow: -1}
	moveClient(t, h, attachment.NewStores(counted, local))
	apitest.Eventually(t, 30*time.Second, func() bool { return jobState(t, h, jobID) == "completed" }, "the move finishes")
	require.EqualValues(t, 5, counted.puts.Load(), "the resumed move copied only what was left")
	require.Equal(t, 8, h.Count("SELECT count(*) FROM attachments WHERE storage = 's3'"))
	require.Equal(t, 8, h.Count("SELECT count(*) FROM attachment_orphans WHERE storage = 'disk' AND NOT upload"),
		"the disk copies wait for the sweep")
	require.Equal(t, 0, h.Count("SELECT count(*) FROM attachment_orphans WHERE storage = 's3'"))
	progress = output()
	require.EqualValues(t, 8, progress["done"], "%v", progress)
	require.EqualValues(t, 0, progress["failed"])

	res, err = inserter.Insert(ctx, jobs.StorageMigrate{}, nil)
	require.NoError(t, err)
	require.False(t, res.UniqueSkippedAsDuplicate, "a finished move does not block the next")
	apitest.Eventually(t, 30*time.Second, func() bool { return jobState(t, h, res.Job.ID) == "completed" }, "the second move finishes")
	require.EqualValues(t, 5, counted.puts.Load(), "run twice, it copies nothing")

	// An API with the bucket and an empty disk serves every moved file.
	bucketOnly := apitest.New(t, apitest.Options{DB: h.DB, Configure: func(s *api.Settings) {
		s.AttachmentStorage = fake.Storage(t, cfg)
	}})
	entries, err := os.ReadDir(bucketOnly.Settings.AttachmentsDir)
	require.NoError(t, err)
	require.Empty(t, entries)
	for i, id := range ids {
		d := bucketOnly.Do("GET", "/api/v1/projects/MOV/issues/"+issue+"/attachments/"+id+"/download", nil, admin.Access)
		require.Equal(t, http.StatusOK, d.Status, "%s", d.Body)
		require.Equal(t, fmt.Sprintf("file number %d", i), string(d.Body))
	}
}

func jobState(t *testing.T, h *apitest.Harness, id int64) string {
	t.Helper()
	var state string
	require.NoError(t, h.DB.Pool.QueryRow(context.Background(), "SELECT state FROM river_job WHERE id = $1", id).Scan(&state))
	return state
}
