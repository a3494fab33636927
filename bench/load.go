package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// op is one request or transaction; it reports its own failure.
type op func(ctx context.Context, worker, seq int) error

// result is one phase: every latency, the error count and the wall time.
type result struct {
	latencies []time.Duration
	errors    int
	firstErr  string
	elapsed   time.Duration
	// statements the server sent to Postgres during the phase (HTTP phases only).
	statements counts
}

// perRequest renders the statements per operation: queries (of which prepared anew).
func (r result) perRequest() string {
	n := float64(len(r.latencies))
	if n == 0 || r.statements.queries == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f (%.2f)", float64(r.statements.queries)/n, float64(r.statements.prepares)/n)
}

func (r result) rps() float64 {
	if r.elapsed == 0 {
		return 0
	}
	return float64(len(r.latencies)) / r.elapsed.Seconds()
}

// pct is the p-th percentile latency of the successful and failed operations alike.
func (r result) pct(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(float64(len(r.latencies))*p/100+0.5) - 1
	i = max(0, min(i, len(r.latencies)-1))
	return r.latencies[i].Round(10 * time.Microsecond)
}

// load runs do from clients goroutines, back to back, for d.
func load(ctx context.Context, clients int, d time.Duration, do op) result {
	var (
		mu  sync.Mutex
		all result
		wg  sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			errs, first := 0, ""
			for seq := 0; time.Now().Before(deadline); seq++ {
				t0 := time.Now()
				err := do(ctx, w, seq)
				lat = append(lat, time.Since(t0))
				if err != nil {
					errs++
					if first == "" {
						first = err.Error()
					}
				}
			}
			mu.Lock()
			all.latencies = append(all.latencies, lat...)
			all.errors += errs
			if all.firstErr == "" {
				all.firstErr = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	all.elapsed = time.Since(start)
	slices.Sort(all.latencies)
	return all
}
