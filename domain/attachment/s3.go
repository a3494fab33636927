package attachment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config is an S3-compatible bucket (TW_S3_*, docs/deployment.md#storage).
type S3Config struct {
	// Endpoint is the server's address, `host:port` or a URL (`http://` switches TLS
	// off); empty is AWS S3 itself.
	Endpoint  string
	Bucket    string
	Region    string
	AccessKey string
	SecretKey string
	// PathStyle addresses the bucket as a path (`host/bucket/key`) rather than a host
	// name (`bucket.host/key`): what MinIO, SeaweedFS, Ceph RGW and Garage expect.
	PathStyle bool
	// Prefix goes before every object's key, so one bucket can hold more than
	// Taskweave's files.
	Prefix string
	// Presign lets downloads answer 302 to a presigned address (Presigner).
	Presign bool
	// CreateBucket creates a missing bucket at start rather than refusing to start.
	CreateBucket bool
	// PartSize is the size of each part of a multipart upload (default S3PartSize); an
	// upload holds one part in memory at a time.
	PartSize uint64
	// Transport replaces the HTTP transport (tests).
	Transport http.RoundTripper
}

// S3PartSize is the part size of uploads: S3's smallest allowed part. Each running
// upload holds one part in memory, so ten concurrent uploads hold about 50 MiB whatever
// their files' sizes.
const S3PartSize = 5 << 20

// S3 is Storage in an S3-compatible bucket, through the plain S3 API only (object PUT,
// GET with Range, DELETE, multipart upload, presigned GET), so AWS, MinIO, SeaweedFS,
// Ceph RGW and Garage all serve it.
type S3 struct {
	client   *minio.Client
	core     minio.Core
	bucket   string
	prefix   string
	presign  bool
	partSize uint64
}

// ErrNoBucket is a bucket that does not exist: at start while TW_S3_CREATE_BUCKET is
// off, or at a readiness check. It is a storage failure (ErrStorage).
var ErrNoBucket = fmt.Errorf("%w: the S3 bucket does not exist (create it, or set TW_S3_CREATE_BUCKET=true)", ErrStorage)

// NewS3 connects to the bucket and checks that it exists (creating it when
// CreateBucket is set); a missing bucket is ErrNoBucket, an unreachable server an error.
func NewS3(ctx context.Context, c S3Config) (*S3, error) {
	if c.Bucket == "" {
		return nil, errors.New("attachment storage: TW_S3_BUCKET is required with TW_STORAGE=s3")
	}
	endpoint, secure := "s3.amazonaws.com", true
	if c.Endpoint != "" {
		endpoint = c.Endpoint
		if u, err := url.Parse(c.Endpoint); err == nil && u.Host != "" {
			endpoint, secure = u.Host, u.Scheme != "http"
		}
	}
	lookup := minio.BucketLookupDNS
	if c.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
		Secure: secure, Region: c.Region, BucketLookup: lookup, Transport: c.Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("attachment storage: S3 client for %s: %w", endpoint, err)
	}
	prefix := c.Prefix
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	s := &S3{client: client, core: minio.Core{Client: client}, bucket: c.Bucket, prefix: prefix, presign: c.Presign,
		partSize: c.PartSize}
	if s.partSize == 0 {
		s.partSize = S3PartSize
	}
	ok, err := client.BucketExists(ctx, c.Bucket)
	if err != nil {
		return nil, fmt.Errorf("attachment storage: S3 bucket %q at %s: %w", c.Bucket, endpoint, err)
	}
	if !ok {
		if !c.CreateBucket {
			return nil, fmt.Errorf("%w: %q at %s", ErrNoBucket, c.Bucket, endpoint)
		}
		if err := client.MakeBucket(ctx, c.Bucket, minio.MakeBucketOptions{Region: c.Region}); err != nil {
			return nil, fmt.Errorf("attachment storage: create S3 bucket %q: %w", c.Bucket, err)
		}
	}
	return s, nil
}

// Location implements Storage.
func (s *S3) Location() Location { return LocationS3 }

func (s *S3) key(name string) string { return s.prefix + name }

// Put implements Storage: a multipart upload of unknown length in parts of PartSize,
// so memory stays at one part whatever the file's size. The object exists only once
// the upload completes; a failed upload is aborted (and one a crash left behind is
// aborted by RemoveStalePartials).
func (s *S3) Put(ctx context.Context, name string, r io.Reader) (int64, error) {
	if !ValidStoredName(name) {
		return 0, fmt.Errorf("put %q: %w", name, ErrFileNotFound)
	}
	cr := &countReader{r: ctxReader{ctx, r}}
	// Each part carries its Content-MD5, which every S3 implementation checks, rather
	// than a streaming (aws-chunked) signature, which not every one decodes.
	_, err := s.client.PutObject(ctx, s.bucket, s.key(name), cr, -1, minio.PutObjectOptions{
		PartSize: s.partSize, ContentType: "application/octet-stream", SendContentMd5: true, DisableContentSha256: true})
	if err != nil {
		return cr.n, fmt.Errorf("put object %s: %w", name, err)
	}
	return cr.n, nil
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Open implements Storage: one GET, its body streamed. The body is read after the
// request handler returns, so the GET does not end with ctx.
func (s *S3) Open(ctx context.Context, name string) (io.ReadCloser, int64, error) {
	return s.get(ctx, name, minio.GetObjectOptions{})
}

// OpenRange implements Storage with a ranged GET.
func (s *S3) OpenRange(ctx context.Context, name string, off, n int64) (io.ReadCloser, error) {
	var opts minio.GetObjectOptions
	if n == 0 { // S3 has no empty range; nothing needs reading
		return io.NopCloser(strings.NewReader("")), nil
	}
	if err := opts.SetRange(off, off+n-1); err != nil {
		return nil, err
	}
	r, _, err := s.get(ctx, name, opts)
	return r, err
}

func (s *S3) get(ctx context.Context, name string, opts minio.GetObjectOptions) (io.ReadCloser, int64, error) {
	if !ValidStoredName(name) {
		return nil, 0, fmt.Errorf("open %q: %w", name, ErrFileNotFound)
	}
	body, info, _, err := s.core.GetObject(context.WithoutCancel(ctx), s.bucket, s.key(name), opts)
	if err != nil {
		return nil, 0, s3Error("get object "+name, err)
	}
	return body, info.Size, nil
}

// Remove implements Storage. S3 answers a DELETE of a missing key like any other, so a
// missing object counts as removed.
func (s *S3) Remove(ctx context.Context, name string) error {
	if !ValidStoredName(name) {
		return fmt.Errorf("remove %q: %w", name, ErrFileNotFound)
	}
	if err := s.client.RemoveObject(ctx, s.bucket, s.key(name), minio.RemoveObjectOptions{}); err != nil {
		return s3Error("remove object "+name, err)
	}
	return nil
}

// Check implements Checker: the bucket answers (a HEAD of the bucket).
func (s *S3) Check(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("S3 bucket %q unreachable: %w", s.bucket, err)
	}
	if !ok {
		return fmt.Errorf("%w: %q", ErrNoBucket, s.bucket)
	}
	return nil
}

// PresignGet implements Presigner with S3's response-content-type and
// response-content-disposition parameters, so the bucket answers with the headers the
// API would have sent.
func (s *S3) PresignGet(ctx context.Context, name string, ttl time.Duration, contentType, disposition string) (string, bool, error) {
	if !s.presign {
		return "", false, nil
	}
	if !ValidStoredName(name) {
		return "", false, fmt.Errorf("presign %q: %w", name, ErrFileNotFound)
	}
	params := url.Values{}
	params.Set("response-content-type", contentType)
	params.Set("response-content-disposition", disposition)
	params.Set("response-cache-control", "private, no-cache")
	u, err := s.client.PresignedGetObject(ctx, s.bucket, s.key(name), min(ttl, MaxPresignTTL), params)
	if err != nil {
		return "", false, fmt.Errorf("presign %s: %w", name, err)
	}
	return u.String(), true, nil
}

// RemoveStalePartials aborts the multipart uploads under the prefix started more than
// olderThan ago: what a process that died mid-upload left. Their parts are invisible
// but billed. A bucket lifecycle rule (AbortIncompleteMultipartUpload) does the same.
func (s *S3) RemoveStalePartials(ctx context.Context, olderThan time.Duration) (removed int, err error) {
	for u := range s.client.ListIncompleteUploads(ctx, s.bucket, s.prefix, true) {
		if u.Err != nil {
			return removed, fmt.Errorf("list incomplete uploads: %w", u.Err)
		}
		if time.Since(u.Initiated) < olderThan {
			continue
		}
		if err := s.core.AbortMultipartUpload(ctx, s.bucket, u.Key, u.UploadID); err != nil {
			return removed, fmt.Errorf("abort upload of %s: %w", u.Key, err)
		}
		removed++
	}
	return removed, nil
}

// s3Error maps a missing object to ErrFileNotFound.
func s3Error(op string, err error) error {
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return fmt.Errorf("%s: %w", op, ErrFileNotFound)
	}
	return fmt.Errorf("%s: %w", op, err)
}
