package api_test

import (
	"bufio"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/attachment/s3test"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestS3UploadMemory: ten concurrent uploads streamed to the bucket hold about one
// multipart part each in memory, whatever the files' size: the peak heap in use grows
// by well under the bytes in flight, and 50 MiB files take no more than 25 MiB files.
// The fake bucket runs in a child process so its copy of the objects is not counted
// (docs/performance.md#attachments-in-s3 has the figures).
//
// Not parallel, on purpose: it samples the whole process's heap.
func TestS3UploadMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 750 MiB")
	}
	endpoint := s3test.NewProcess(t)
	cfg := attachment.S3Config{Endpoint: endpoint, Bucket: "mem", Region: "us-east-1", AccessKey: "k", SecretKey: "s",
		PathStyle: true, CreateBucket: true}
	h := atS3(t, storetest.PackageDB(t), cfg, func(s *api.Settings) { s.MaxUploadBytes = 50 << 20 })
	f := atFixtureOn(t, h)
	base := atListen(t, h)
	client := &http.Client{Timeout: 5 * time.Minute}

	peak := func(size int64) (growth, rss uint64) {
		baseline, top := heapPeak(func() {
			var wg sync.WaitGroup
			for range 10 {
				wg.Go(func() {
					resp, body, _ := atStreamUpload(t, client, base+f.at(""), f.Member.Access, size)
					require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", body)
				})
			}
			wg.Wait()
		})
		return top - min(baseline, top), vmRSS(t)
	}
	growth25, rss25 := peak(25 << 20)
	growth50, rss50 := peak(50 << 20)
	t.Logf("10 concurrent uploads to S3: 25 MiB each: heap in use +%d MiB (RSS %d MiB); 50 MiB each: heap in use +%d MiB (RSS %d MiB)",
		growth25>>20, rss25>>20, growth50>>20, rss50>>20)
	require.Less(t, growth25, uint64(128<<20), "250 MiB in flight must not sit in memory")
	require.Less(t, growth50, uint64(128<<20), "500 MiB in flight must not sit in memory")
	require.Less(t, growth50, growth25+32<<20, "twice the file size, about the same memory")
	require.Equal(t, 20, f.rows())
}

// heapPeak runs during and returns the heap in use after a collection before it and the
// highest heap in use sampled every 5 ms while it ran.
func heapPeak(during func()) (baseline, peak uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseline = ms.HeapInuse
	var top atomic.Uint64
	top.Store(baseline)
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&m)
				if m.HeapInuse > top.Load() {
					top.Store(m.HeapInuse)
				}
			}
		}
	}()
	during()
	close(stop)
	<-sampled
	return baseline, top.Load()
}

// vmRSS is the process's resident set size, from /proc (0 elsewhere).
func vmRSS(t *testing.T) uint64 {
	file, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	return 0
}
