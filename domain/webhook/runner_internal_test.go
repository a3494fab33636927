package webhook

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// goroutineID is the running goroutine's number, from its stack header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(bytes.Fields(buf)[1])
}

// TestRunnerReusesIdleGoroutinesAndNeverQueues: calls made one after another run on the
// goroutine the first one started; a call made while every runner goroutine is busy
// starts another at once instead of waiting; idle goroutines exit.
func TestRunnerReusesIdleGoroutinesAndNeverQueues(t *testing.T) {
	r := newRunner(200 * time.Millisecond)
	base := runtime.NumGoroutine()

	seen := map[string]bool{}
	for range 50 {
		done := make(chan string)
		r.do(func() { done <- goroutineID() })
		seen[<-done] = true
		time.Sleep(2 * time.Millisecond) // back to waiting for work
	}
	// A call that comes before the goroutine is back waiting starts another, so allow
	// a few on a loaded machine; a fresh goroutine per call would be 50.
	require.LessOrEqual(t, len(seen), 5, "calls reuse the idle goroutine")

	block := make(chan struct{})
	var started sync.WaitGroup
	started.Add(3)
	go func() { // a do that blocked would fail the select below, not hang the test
		for range 3 {
			r.do(func() { started.Done(); <-block })
		}
	}()
	waited := make(chan struct{})
	go func() { started.Wait(); close(waited) }()
	select {
	case <-waited: // all three ran concurrently: none waited for another
	case <-time.After(5 * time.Second):
		t.Fatal("a call queued behind a busy one")
	}
	close(block)

	// Polled by hand: require.Eventually runs its condition on goroutines of its own.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), base, "idle goroutines exit")
}
