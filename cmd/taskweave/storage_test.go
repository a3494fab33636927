package main

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/attachment/s3test"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestStorageConfig: disk by default; s3 needs a bucket; the keys can come from files
// (not both ways at once); path-style addressing is the default with an endpoint.
func TestStorageConfig(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("s", 32)
	load := func(env map[string]string) (*Config, error) {
		env["TW_JWT_SECRET"] = secret
		return loadConfig(context.Background(), envconfig.MapLookuper(env))
	}
	cfg, err := load(map[string]string{})
	require.NoError(t, err)
	require.Equal(t, "disk", cfg.Storage)
	require.Equal(t, "us-east-1", cfg.S3Region)

	for env, want := range map[string]map[string]string{
		"TW_STORAGE must be disk or s3":     {"TW_STORAGE": "nfs"},
		"TW_STORAGE=s3 needs TW_S3_BUCKET":  {"TW_STORAGE": "s3"},
		"TW_S3_PATH_STYLE must be":          {"TW_S3_PATH_STYLE": "sometimes"},
		"set together; set one":             {"TW_S3_SECRET_KEY": "a", "TW_S3_SECRET_KEY_FILE": "/nonexistent"},
		"TW_S3_ACCESS_KEY_FILE: open /none": {"TW_S3_ACCESS_KEY_FILE": "/none"},
	} {
		_, err := load(want)
		require.ErrorContains(t, err, env)
	}

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ak"), []byte("access\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sk"), []byte("secret"), 0o600))
	cfg, err = load(map[string]string{"TW_STORAGE": "s3", "TW_S3_BUCKET": "b", "TW_S3_ENDPOINT": "http://minio:9000",
		"TW_S3_ACCESS_KEY_FILE": filepath.Join(dir, "ak"), "TW_S3_SECRET_KEY_FILE": filepath.Join(dir, "sk")})
	require.NoError(t, err)
	s3 := cfg.s3Config()
	require.Equal(t, "access", s3.AccessKey)
	require.Equal(t, "secret", s3.SecretKey)
	require.True(t, s3.PathStyle, "an endpoint defaults to path-style")
	cfg, err = load(map[string]string{"TW_STORAGE": "s3", "TW_S3_BUCKET": "b"})
	require.NoError(t, err)
	require.False(t, cfg.s3Config().PathStyle, "AWS itself: host-style")
	cfg, err = load(map[string]string{"TW_STORAGE": "s3", "TW_S3_BUCKET": "b", "TW_S3_ENDPOINT": "http://x", "TW_S3_PATH_STYLE": "false"})
	require.NoError(t, err)
	require.False(t, cfg.s3Config().PathStyle)
}

// TestBackupVerifyBothStores: `backup verify` checks each row in the storage it names,
// the directory or the bucket, and reports an object missing from the bucket.
func TestBackupVerifyBothStores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := s3test.New(t)
	dbURL := cloneURL(t)
	db, err := store.Open(ctx, dbURL, 4)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	dir := t.TempDir()

	onDisk := apitest.New(t, apitest.Options{DB: db, Configure: func(s *api.Settings) { s.AttachmentsDir = dir }})
	bucketCfg := fake.Config("backup", "")
	inBucket := apitest.New(t, apitest.Options{DB: db, Configure: func(s *api.Settings) {
		s.AttachmentsDir = dir
		s.AttachmentStorage = fake.Storage(t, bucketCfg)
	}})
	owner := onDisk.Register("owner")
	require.Equal(t, http.StatusCreated, onDisk.Do("POST", "/api/v1/projects", map[string]any{"key": "BAK", "name": "B"}, owner.Access).Status)
	issue := onDisk.Do("POST", "/api/v1/projects/BAK/issues", map[string]any{"title": "x"}, owner.Access).JSON(t)["key"].(string)
	for _, h := range []*apitest.Harness{onDisk, inBucket} {
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		part, err := w.CreateFormFile("file", "f.txt")
		require.NoError(t, err)
		_, _ = part.Write([]byte("content"))
		require.NoError(t, w.Close())
		r := h.Do("POST", "/api/v1/projects/BAK/issues/"+issue+"/attachments", body.Bytes(), owner.Access, "Content-Type", w.FormDataContentType())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	}
	require.Equal(t, 1, onDisk.Count("SELECT count(*) FROM attachments WHERE storage = 's3'"))
	require.Equal(t, 1, onDisk.Count("SELECT count(*) FROM attachments WHERE storage = 'disk'"))

	cfg, err := loadConfig(ctx, envconfig.MapLookuper(map[string]string{"TW_JWT_SECRET": strings.Repeat("s", 32),
		"TW_DATABASE_URL": dbURL, "TW_ATTACHMENTS_DIR": dir, "TW_STORAGE": "s3", "TW_S3_ENDPOINT": fake.HTTP.URL,
		"TW_S3_BUCKET": "backup", "TW_S3_ACCESS_KEY": "test", "TW_S3_SECRET_KEY": "test-secret", "TW_LOG_LEVEL": "error"}))
	require.NoError(t, err)
	a, err := newApp(ctx, cfg, false)
	require.NoError(t, err)
	defer a.close()
	var out bytes.Buffer
	require.NoError(t, a.verifyBackup(ctx, &out))
	require.Contains(t, out.String(), "2 attachment rows checked, 0 without their file")

	var name string
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT stored_name FROM attachments WHERE storage = 's3'").Scan(&name))
	require.NoError(t, fake.Storage(t, bucketCfg).Remove(ctx, name))
	out.Reset()
	require.ErrorIs(t, a.verifyBackup(ctx, &out), errBackupIncomplete)
	require.Contains(t, out.String(), "stored as "+name)
	require.Contains(t, out.String(), "2 attachment rows checked, 1 without their file")
}

// TestStorageMigrateCommand: `storage migrate` needs TW_STORAGE=s3, queues one move
// and reports a move already queued instead of queueing a second.
func TestStorageMigrateCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := s3test.New(t)
	dbURL := cloneURL(t)
	env := map[string]string{"TW_JWT_SECRET": strings.Repeat("s", 32), "TW_DATABASE_URL": dbURL,
		"TW_ATTACHMENTS_DIR": t.TempDir(), "TW_LOG_LEVEL": "error"}
	cfg, err := loadConfig(ctx, envconfig.MapLookuper(env))
	require.NoError(t, err)
	a, err := newApp(ctx, cfg, false)
	require.NoError(t, err)
	defer a.close()
	require.ErrorContains(t, a.startStorageMigrate(ctx, io.Discard), "set TW_STORAGE=s3")

	for k, v := range map[string]string{"TW_STORAGE": "s3", "TW_S3_ENDPOINT": fake.HTTP.URL, "TW_S3_BUCKET": "absent",
		"TW_S3_ACCESS_KEY": "k", "TW_S3_SECRET_KEY": "s"} {
		env[k] = v
	}
	a.cfg, err = loadConfig(ctx, envconfig.MapLookuper(env))
	require.NoError(t, err)
	require.ErrorIs(t, a.startStorageMigrate(ctx, io.Discard), attachment.ErrNoBucket, "a missing bucket is a clear error")
	env["TW_S3_CREATE_BUCKET"] = "true"
	a.cfg, err = loadConfig(ctx, envconfig.MapLookuper(env))
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, a.startStorageMigrate(ctx, &out))
	require.Contains(t, out.String(), " queued on queue storage")
	out.Reset()
	require.NoError(t, a.startStorageMigrate(ctx, &out))
	require.Contains(t, out.String(), "already available")
	var n int
	require.NoError(t, a.db.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = 'storage.migrate'").Scan(&n))
	require.Equal(t, 1, n)
}

// cloneURL is a fresh database cloned from the migrated template, dropped after the test.
func cloneURL(t *testing.T) string {
	t.Helper()
	url, err := storetest.CloneURL(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { storetest.Drop(url) })
	return url
}
