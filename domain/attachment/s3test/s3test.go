// Package s3test serves an in-memory S3 protocol peer (gofakes3) over real HTTP for
// tests of the bucket storage: minio-go talks to it exactly as to AWS or MinIO.
package s3test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/attachment"
)

// Server is a running fake S3 endpoint.
type Server struct {
	HTTP    *httptest.Server
	Backend *s3mem.Backend
	// Down makes every request fail with 503, as an unreachable bucket would.
	Down atomic.Bool
	// Puts counts object writes (PUT requests: whole objects and parts).
	Puts atomic.Int64
}

// New starts a fake S3 endpoint until the test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{Backend: s3mem.New()}
	fake := gofakes3.New(s.Backend)
	inner := fake.Server()
	s.HTTP = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if r.Method == http.MethodPut {
			s.Puts.Add(1)
		}
		inner.ServeHTTP(w, r)
	}))
	tb.Cleanup(s.HTTP.Close)
	return s
}

// Config is a bucket on the server (created when missing) with the given prefix.
func (s *Server) Config(bucket, prefix string) attachment.S3Config {
	return attachment.S3Config{Endpoint: s.HTTP.URL, Bucket: bucket, Region: "us-east-1", AccessKey: "test",
		SecretKey: "test-secret", PathStyle: true, Prefix: prefix, CreateBucket: true}
}

// Storage connects a bucket storage to the server.
func (s *Server) Storage(tb testing.TB, c attachment.S3Config) *attachment.S3 {
	tb.Helper()
	st, err := attachment.NewS3(context.Background(), c)
	require.NoError(tb, err)
	return st
}

// Keys lists the object keys of bucket.
func (s *Server) Keys(tb testing.TB, bucket string) []string {
	tb.Helper()
	list, err := s.Backend.ListBucket(bucket, &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	require.NoError(tb, err)
	keys := []string{}
	for _, o := range list.Contents {
		keys = append(keys, o.Key)
	}
	return keys
}

// Core is a low-level client of the bucket of c, for tests that drive S3 themselves
// (an incomplete multipart upload).
func Core(tb testing.TB, c attachment.S3Config) *minio.Core {
	tb.Helper()
	core, err := minio.NewCore(strings.TrimPrefix(c.Endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""), Region: c.Region, BucketLookup: minio.BucketLookupPath})
	require.NoError(tb, err)
	return core
}

// PutOptions are plain put options.
func PutOptions() minio.PutObjectOptions { return minio.PutObjectOptions{} }

// childEnv marks a test binary started by NewProcess to serve the fake and nothing else.
const childEnv = "TW_S3TEST_CHILD"

// ServeIfChild serves a fake S3 endpoint and returns true when the test binary was
// started by NewProcess (call it first in TestMain and return when it does): it prints
// its URL and serves until its standard input closes.
func ServeIfChild() bool {
	if os.Getenv(childEnv) == "" {
		return false
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go func() { _ = http.Serve(ln, gofakes3.New(s3mem.New()).Server()) }()
	fmt.Printf("http://%s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return true
}

// NewProcess starts the fake S3 endpoint in a child process (the test binary again, see
// ServeIfChild) and returns its URL: a test that measures its own process's memory
// must not count the fake's copy of every object.
func NewProcess(tb testing.TB) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(tb, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(tb, err)
	cmd.Stderr = os.Stderr
	require.NoError(tb, cmd.Start())
	tb.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(tb, err)
	return strings.TrimSpace(line)
}
