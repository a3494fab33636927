package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/jobs"
)

// checkStorage refuses a storage choice that cannot work and reads the S3 keys given as
// files (TW_S3_ACCESS_KEY_FILE, TW_S3_SECRET_KEY_FILE: a mounted secret).
func checkStorage(cfg *Config) error {
	switch cfg.Storage {
	case "disk", "s3":
	default:
		return fmt.Errorf("TW_STORAGE must be disk or s3 (got %q)", cfg.Storage)
	}
	if cfg.S3PathStyle != "" {
		if _, err := strconv.ParseBool(cfg.S3PathStyle); err != nil {
			return fmt.Errorf("TW_S3_PATH_STYLE must be true or false (got %q)", cfg.S3PathStyle)
		}
	}
	for _, s := range []struct {
		name  string
		value *string
		file  string
	}{
		{"TW_S3_ACCESS_KEY", &cfg.S3AccessKey, cfg.S3AccessKeyFile},
		{"TW_S3_SECRET_KEY", &cfg.S3SecretKey, cfg.S3SecretKeyFile},
	} {
		if s.file == "" {
			continue
		}
		if *s.value != "" {
			return fmt.Errorf("%s and %s_FILE are set together; set one", s.name, s.name)
		}
		raw, err := os.ReadFile(s.file)
		if err != nil {
			return fmt.Errorf("%s_FILE: %w", s.name, err)
		}
		*s.value = strings.TrimRight(string(raw), "\r\n")
	}
	if cfg.Storage == "s3" && cfg.S3Bucket == "" {
		return fmt.Errorf("TW_STORAGE=s3 needs TW_S3_BUCKET")
	}
	return nil
}

// s3Config is the bucket of TW_S3_*: path-style addressing unless TW_S3_PATH_STYLE says
// otherwise when an endpoint is set (MinIO, SeaweedFS, Ceph RGW, Garage), host-style for
// AWS itself.
func (c *Config) s3Config() attachment.S3Config {
	pathStyle := c.S3Endpoint != ""
	if c.S3PathStyle != "" {
		pathStyle, _ = strconv.ParseBool(c.S3PathStyle)
	}
	return attachment.S3Config{Endpoint: c.S3Endpoint, Bucket: c.S3Bucket, Region: c.S3Region,
		AccessKey: c.S3AccessKey, SecretKey: c.S3SecretKey, PathStyle: pathStyle, Prefix: c.S3Prefix,
		Presign: c.S3Presign, CreateBucket: c.S3CreateBucket}
}

// uploadStorage is the storage new attachment files go to: nil for the disk (the API
// wires it from TW_ATTACHMENTS_DIR), the bucket for TW_STORAGE=s3. A missing bucket is
// a start-up error unless TW_S3_CREATE_BUCKET creates it.
func (a *app) uploadStorage(ctx context.Context) (attachment.Storage, error) {
	if a.cfg.Storage != "s3" {
		return nil, nil
	}
	return attachment.NewS3(ctx, a.cfg.s3Config())
}

// attachmentStores are the storages this process reads and writes attachment files in:
// the bucket (TW_STORAGE=s3) and TW_ATTACHMENTS_DIR. With the bucket, a directory that
// does not exist is left out rather than created.
func (a *app) attachmentStores(ctx context.Context) (*attachment.Stores, error) {
	bucket, err := a.uploadStorage(ctx)
	if err != nil {
		return nil, err
	}
	if bucket == nil {
		local, err := attachment.NewLocal(a.cfg.AttachmentsDir)
		if err != nil {
			return nil, err
		}
		return attachment.NewStores(local), nil
	}
	if _, err := os.Stat(a.cfg.AttachmentsDir); err != nil {
		return attachment.NewStores(bucket), nil
	}
	local, err := attachment.NewLocal(a.cfg.AttachmentsDir)
	if err != nil {
		return nil, err
	}
	return attachment.NewStores(bucket, local), nil
}

// workerStores are the storages a worker process moves files between and keeps the
// attachments of ingested e-mails in: none unless TW_STORAGE=s3 (then the bucket, and
// the directory when it exists) or e-mail ingestion is on (then the uploads' storage:
// with the disk, the worker needs the API's TW_ATTACHMENTS_DIR, docs/deployment.md).
func (a *app) workerStores(ctx context.Context) (*attachment.Stores, error) {
	if a.cfg.Storage != "s3" && !a.cfg.MailIngestEnabled {
		return nil, nil
	}
	return a.attachmentStores(ctx)
}

// startStorageMigrate is `taskweave storage migrate`: it queues the move of every
// attachment file on the disk to the bucket (jobs.StorageMigrate), which a worker with
// both TW_ATTACHMENTS_DIR and the bucket runs, and says which job to watch. A move
// already queued or running is reported, not doubled.
func (a *app) startStorageMigrate(ctx context.Context, out io.Writer) error {
	if a.cfg.Storage != "s3" {
		return errors.New("storage migrate: set TW_STORAGE=s3 and the TW_S3_* bucket settings first (docs/deployment.md#storage)")
	}
	if err := a.ready(30 * time.Second); err != nil {
		return fmt.Errorf("storage migrate: %w", err)
	}
	if _, err := a.uploadStorage(ctx); err != nil {
		return fmt.Errorf("storage migrate: %w", err)
	}
	inserter, err := jobs.NewInserter(a.db.SQL, a.log)
	if err != nil {
		return err
	}
	res, err := inserter.Insert(ctx, jobs.StorageMigrate{}, nil)
	if err != nil {
		return fmt.Errorf("storage migrate: %w", err)
	}
	state := "queued"
	if res.UniqueSkippedAsDuplicate {
		state = "already " + string(res.Job.State)
	}
	fmt.Fprintf(out, "storage migrate: job %d %s on queue %s; its progress (total, done, failed) is the job's output in /api/v1/admin/jobs/%d and River UI\n",
		res.Job.ID, state, jobs.QueueStorage, res.Job.ID)
	return nil
}
