package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/taskweave/taskweave/store"
)

// targetScaleRSSMiB bounds the resident set of each `taskweave api` and `taskweave
// worker` process of the scale phase's big instance (issue #32: today's bounds).
const targetScaleRSSMiB = 150

// rssSampleEvery is how often the scale phase reads the processes' VmRSS.
const rssSampleEvery = 100 * time.Millisecond

// scaleProcs are an instance's own `taskweave api` and `taskweave worker` processes:
// the figures' requests go to the API process, the worker /metrics figure scrapes the
// worker, and both resident sets are sampled while the figures are measured.
type scaleProcs struct {
	api, worker *workerProcs
	apiClient   *client
	// metrics scrapes the worker's GET /metrics.
	metrics op
	// apiMem and workerMem sample the processes' resident sets once started.
	apiMem, workerMem *rssSampler
}

// scaleAppName is the application_name an instance's process of role sets on its
// Postgres sessions (through its TW_DATABASE_URL), by which pg_stat_activity tells its
// connections from the bench's and the other process's.
func scaleAppName(role string) string { return "taskweave-scale-" + role }

// withAppName is dbURL with application_name set to name.
func withAppName(dbURL, name string) (string, error) {
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", fmt.Errorf("parse database url: %w", err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// startScaleProcs starts one `bin api` and one `bin worker` on dbURL and waits until
// both are ready. The worker's SLA breach monitor runs once at start and then only
// daily (TW_SLA_INTERVAL): the phase times the scan itself on its own clock
// (runSLA), and a scan by the worker on the real clock would move the scan state
// (sla_scan_state) past the timers the phase seeds.
func startScaleProcs(ctx context.Context, bin, dbURL string, clients int) (_ *scaleProcs, err error) {
	p := &scaleProcs{}
	defer func() {
		if err != nil {
			p.stop()
		}
	}()
	for _, role := range []string{"api", "worker"} {
		roleURL, err := withAppName(dbURL, scaleAppName(role))
		if err != nil {
			return nil, err
		}
		procs, err := startBuilt(bin, role, 1, procEnv(roleURL, "TW_SLA_INTERVAL=24h"))
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", role, err)
		}
		if role == "api" {
			p.api = procs
		} else {
			p.worker = procs
		}
		if err := procs.ready(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", role, err)
		}
	}
	p.apiClient = newClient("http://"+p.api.addrs[0], clients)
	scraper := newClient("http://"+p.worker.addrs[0], 1)
	p.metrics = func(ctx context.Context, _, _ int) error {
		_, err := scraper.do(ctx, http.MethodGet, "/metrics", "", nil, http.StatusOK, false)
		return err
	}
	return p, nil
}

// sample starts sampling both processes' resident sets.
func (p *scaleProcs) sample() {
	p.apiMem = sampleRSS(p.api.cmds[0].Process.Pid)
	p.workerMem = sampleRSS(p.worker.cmds[0].Process.Pid)
}

// stop ends the sampling and both processes.
func (p *scaleProcs) stop() {
	for _, s := range []*rssSampler{p.apiMem, p.workerMem} {
		if s != nil {
			s.stop()
		}
	}
	for _, procs := range []*workerProcs{p.api, p.worker} {
		if procs != nil {
			procs.stop()
		}
	}
}

// rssSampler reads a process's VmRSS every rssSampleEvery until stopped, keeping the
// largest; at the end it reads VmRSS and VmHWM (the kernel's own peak, start-up
// included) once more.
type rssSampler struct {
	pid              string
	done             chan struct{}
	wg               sync.WaitGroup
	once             sync.Once
	peak, end, hwm   int // KiB
	samples, started int
}

// sampleRSS starts sampling pid.
func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{pid: strconv.Itoa(pid), done: make(chan struct{})}
	s.started = procStatusKiB(s.pid, "VmRSS")
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(rssSampleEvery)
		defer t.Stop()
		for {
			s.peak = max(s.peak, procStatusKiB(s.pid, "VmRSS"))
			s.samples++
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop ends the sampling (once) and reads the end figures.
func (s *rssSampler) stop() {
	s.once.Do(func() {
		close(s.done)
		s.wg.Wait()
		s.end, s.hwm = procStatusKiB(s.pid, "VmRSS"), procStatusKiB(s.pid, "VmHWM")
		s.peak = max(s.peak, s.end)
	})
}

// line is the sampler's figures beside the bound, with a verdict on the larger of
// the sampled peak and VmHWM.
func (s *rssSampler) line(role string) string {
	worst := max(s.peak, s.hwm)
	return fmt.Sprintf("%-6s RSS at start %6.1f MB, sampled peak %6.1f MB, VmHWM %6.1f MB, at end %6.1f MB (%d samples; bound ≤ %d MB): %s",
		role, mib(s.started), mib(s.peak), mib(s.hwm), mib(s.end), s.samples, targetScaleRSSMiB, verdict(worst <= targetScaleRSSMiB*1024))
}

// mib is KiB in MiB.
func mib(kib int) float64 { return float64(kib) / 1024 }

// procConnections counts the Postgres sessions of the instance's database whose
// application_name is name, by state.
func procConnections(ctx context.Context, db *store.DB, name string) (total int, detail string, err error) {
	err = db.Pool.QueryRow(ctx, `SELECT coalesce(sum(n), 0)::int, coalesce(string_agg(state || ' ' || n, ', ' ORDER BY state), '')
		FROM (SELECT coalesce(state, '?') AS state, count(*) AS n FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1 GROUP BY 1) AS s`, name).Scan(&total, &detail)
	if err != nil {
		return 0, "", fmt.Errorf("connections of %s: %w", name, err)
	}
	return total, detail, nil
}

// printScaleProcs ends the sampling of r's processes and prints their resident sets
// beside the bound and the Postgres sessions each holds beside what
// docs/operations.md#scaling says it uses: its pool of TW_DATABASE_MAX_CONNS (pgx's
// default, the larger of 4 and the CPU count, when unset), held open, plus the API's
// LISTEN connection, and the worker's second (keyed) pool of the same size and its
// River notifier's LISTEN connection.
func printScaleProcs(ctx context.Context, r *scaleRun) error {
	pool := max(4, runtime.NumCPU())
	for _, p := range []struct {
		role string
		mem  *rssSampler
		want int
		why  string
	}{{"api", r.procs.apiMem, pool + 1, fmt.Sprintf("pool %d + LISTEN 1", pool)},
		{"worker", r.procs.workerMem, 2*pool + 1, fmt.Sprintf("pool %d + keyed pool %d + LISTEN 1", pool, pool)}} {
		p.mem.stop()
		fmt.Printf("scale %d: %s\n", r.n, p.mem.line(p.role))
		n, detail, err := procConnections(ctx, r.db, scaleAppName(p.role))
		if err != nil {
			return err
		}
		fmt.Printf("scale %d: %-6s Postgres sessions %d (%s); docs/operations.md#scaling: %d (%s): %s\n",
			r.n, p.role, n, detail, p.want, p.why, verdict(n == p.want))
	}
	return nil
}
