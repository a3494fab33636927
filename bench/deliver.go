package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/valyala/fasthttp"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/store"
)

// Delivery targets on the reference machine (2 cores, two worker processes).
const (
	targetDeliveriesPerSecond = 3000
	targetDeliveryP99         = 250 * time.Millisecond
)

// deliverOptions shape the delivery phase.
type deliverOptions struct {
	events  int           // issue events emitted
	warmup  int           // events emitted and delivered first, not measured
	rate    int           // offered events per second; 0 = as fast as the emitters go
	batch   int           // events per transaction
	workers int           // worker processes
	crash   bool          // SIGKILL one worker when a third of the deliveries arrived
	wait    time.Duration // how long to wait for the last delivery
	// workerConns is each worker process's TW_DATABASE_MAX_CONNS (0 = its default).
	workerConns int
}

// receiver is the local webhook endpoint: it checks every signature and records when
// each delivery id arrived, counting repeats (a crashed worker's redelivery).
type receiver struct {
	secret    string
	prefix    string
	mu        sync.Mutex
	committed map[string]time.Time // issue id → just before its event's commit
	arrived   map[string]time.Time // delivery id → first receipt
	latencies []time.Duration
	dups      atomic.Int64
	badSig    atomic.Int64
	distinct  atomic.Int64
	first     time.Time
	last      time.Time
}

func newReceiver(prefix string) *receiver {
	return &receiver{prefix: prefix, committed: map[string]time.Time{}, arrived: map[string]time.Time{}}
}

// handle is the receiver's endpoint. It runs on fasthttp's server, as the API does: the
// receiver shares the machine with the pipeline it measures, and net/http's server cost
// about twice as much CPU per request.
func (r *receiver) handle(c *fasthttp.RequestCtx) {
	now := time.Now()
	body := c.PostBody()
	if string(c.Request.Header.Peek(r.prefix+"-Signature")) != webhook.Sign(body, r.secret) {
		r.badSig.Add(1)
	}
	issueID := issueIDOf(body)
	id := string(c.Request.Header.Peek(r.prefix + "-Delivery"))
	r.mu.Lock()
	if _, seen := r.arrived[id]; seen {
		r.dups.Add(1)
	} else {
		r.arrived[id] = now
		if c, ok := r.committed[issueID]; ok {
			r.latencies = append(r.latencies, max(now.Sub(c), 0))
		}
		if r.first.IsZero() {
			r.first = now
		}
		r.last = now
		r.distinct.Add(1)
	}
	r.mu.Unlock()
	c.SetStatusCode(fasthttp.StatusOK)
}

// issueIDOf finds the issue id in a delivery body (data.issueId, see
// docs/api-conventions.md#events-and-webhooks; the body's only "issueId" member) without
// decoding the whole document: a full json.Unmarshal was most of the receiver's own CPU,
// which the bench's machine shares with the pipeline it measures. The signature check
// covers the whole body.
func issueIDOf(body []byte) string {
	const key = `"issueId":"`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return ""
	}
	rest := body[i+len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return ""
	}
	return string(rest[:end])
}

// reset forgets every delivery so far (the warm-up's) before the measured run.
func (r *receiver) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.committed, r.arrived, r.latencies = map[string]time.Time{}, map[string]time.Time{}, nil
	r.first, r.last = time.Time{}, time.Time{}
	r.dups.Store(0)
	r.badSig.Store(0)
	r.distinct.Store(0)
}

// await waits until n distinct deliveries arrived or within passed, and reports whether
// they all did.
func (r *receiver) await(n int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for r.distinct.Load() < int64(n) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

func (r *receiver) commit(ids []uuid.UUID, at time.Time) {
	r.mu.Lock()
	for _, id := range ids {
		r.committed[id.String()] = at
	}
	r.mu.Unlock()
}

// workerProcs runs `taskweave worker` processes on the bench database.
type workerProcs struct {
	cmds  []*exec.Cmd
	addrs []string
}

// freeAddr finds a free loopback port for a worker's health and metrics listener.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// ready waits until every worker answers /readyz, so start-up is not measured.
func (p *workerProcs) ready(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for _, addr := range p.addrs {
		for {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("worker on %s not ready within 30 s", addr)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// procEnv is the environment of a `taskweave` process the bench starts on dbURL: the
// bench's JWT secret, warnings only, attachments in the bench's directory, then extra.
func procEnv(dbURL string, extra ...string) []string {
	return append([]string{"TW_DATABASE_URL=" + dbURL, "TW_JWT_SECRET=" + benchJWTSecret, "TW_LOG_LEVEL=warn",
		"TW_ATTACHMENTS_DIR=" + benchAttachmentsDir}, extra...)
}

// startWorkers builds the binary and starts n worker processes with env.
// workerCPUProfile (-worker-cpuprofile) is the path prefix of the worker processes' CPU
// profiles; "" for none.
var workerCPUProfile string

func startWorkers(ctx context.Context, n int, env []string) (*workerProcs, error) {
	return startProcesses(ctx, "worker", n, env)
}

// startProcesses builds the binary and starts n `taskweave <role>` processes with env,
// each listening on a free loopback address (p.addrs).
func startProcesses(ctx context.Context, role string, n int, env []string) (*workerProcs, error) {
	bin, err := buildTaskweave(ctx)
	if err != nil {
		return nil, err
	}
	return startBuilt(bin, role, n, env)
}

// buildTaskweave builds `taskweave` into a temporary directory and returns its path, for
// a phase that starts processes of more than one role from one build.
func buildTaskweave(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "taskweave-bench-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "taskweave")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/taskweave")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build taskweave: %w", err)
	}
	return bin, nil
}

// startBuilt starts n `bin <role>` processes with env, each listening on a free
// loopback address (p.addrs).
func startBuilt(bin, role string, n int, env []string) (*workerProcs, error) {
	p := &workerProcs{}
	for i := range n {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		p.addrs = append(p.addrs, addr)
		cmd := exec.Command(bin, role)
		cmd.Env = append(os.Environ(), env...)
		cmd.Env = append(cmd.Env, "TW_HTTP_ADDR="+addr)
		if workerCPUProfile != "" && role == "worker" {
			cmd.Env = append(cmd.Env, fmt.Sprintf("TW_CPU_PROFILE=%s.%d", workerCPUProfile, i+1))
		}
		cmd.Stderr = &prefixWriter{prefix: fmt.Sprintf("%s %d: ", role, i+1)}
		if err := cmd.Start(); err != nil {
			p.stop()
			return nil, err
		}
		p.cmds = append(p.cmds, cmd)
	}
	return p, nil
}

// kill sends SIGKILL to worker i: no shutdown, its running jobs are left to River's rescuer.
func (p *workerProcs) kill(i int) error {
	return p.cmds[i].Process.Signal(syscall.SIGKILL)
}

func (p *workerProcs) stop() {
	for _, c := range p.cmds {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range p.cmds {
		_ = c.Wait()
	}
}

// prefixWriter passes on the workers' warnings and errors, one line each.
type prefixWriter struct {
	prefix string
	mu     sync.Mutex
}

func (w *prefixWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Fprintf(os.Stderr, "%s%s", w.prefix, b)
	return len(b), nil
}

// deliverResult is what the delivery phase measured.
type deliverResult struct {
	events, distinct, dups, badSig int
	elapsed                        time.Duration
	latencies                      []time.Duration
	killedAt                       int
	// emitted is how long emitting every event took (the offered rate's real pace).
	emitted time.Duration
	// cpu is the machine's busy and stolen CPU time from the first event to the last
	// receipt (zero where unknown): what the whole pipeline cost, and how much of the
	// machine the hypervisor gave to others meanwhile, which the rate depends on too.
	cpu cpuTimes
	// Crash phase: jobs River's rescuer gave back, whether the queue drained, and when.
	rescued   int
	drained   bool
	recovered time.Duration
}

// waitDrained waits until no webhook delivery job is waiting, running or due for a
// retry, and returns how many delivery jobs River's rescuer handed back.
func waitDrained(ctx context.Context, db *store.DB, within time.Duration) (rescued int, drained bool) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var open int
		err := db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state NOT IN ('completed', 'discarded', 'cancelled')),
				count(*) FILTER (WHERE errors::text LIKE '%rescued by JobRescuer%')
			FROM river_job WHERE kind = 'webhook.deliver'`).Scan(&open, &rescued)
		if err == nil && open == 0 {
			return rescued, true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return rescued, false
}

func (d deliverResult) perSecond() float64 {
	if d.elapsed <= 0 {
		return 0
	}
	return float64(d.distinct) / d.elapsed.Seconds()
}

func (d deliverResult) pct(p float64) time.Duration {
	return result{latencies: d.latencies}.pct(p)
}

// emitEvents emits o.events issue.created events on the server's bus, o.batch per
// transaction, paced to o.rate. Each event has a fresh issue id so the receiver can tell
// its commit time; the webhook consumer builds the payload from the event alone, exactly
// as for an API request, but no issue row is written: the API's own cost is measured by
// the other phases, this one measures the delivery pipeline.
func emitEvents(ctx context.Context, db *store.DB, bus *event.Bus, s *seeded, recv *receiver, o deliverOptions) error {
	batches := (o.events + o.batch - 1) / o.batch
	return paced(batches, o.batch, o.rate, 8, func(b int) error { return emitBatch(ctx, db, bus, s, recv, b, o) })
}

// paced calls emit for batches 0..batches-1 from conns goroutines, starting batch b no
// earlier than b×size/rate seconds after the first (rate 0: as fast as they go), and
// returns the first error any call returned, once every batch is done.
func paced(batches, size, rate, conns int, emit func(b int) error) error {
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(size) / float64(rate))
	}
	ch := make(chan int)
	errCh := make(chan error, 1)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range ch {
				if err := emit(b); err != nil {
					select {
					case errCh <- err:
					default:
					}
				}
			}
		}()
	}
	start := time.Now()
	for b := range batches {
		if interval > 0 {
			if wait := time.Until(start.Add(time.Duration(b) * interval)); wait > 0 {
				time.Sleep(wait)
			}
		}
		ch <- b
	}
	close(ch)
	wg.Wait()
	select {
	case err := <-errCh:
		return err
	default:
		return nil
	}
}

func emitBatch(ctx context.Context, db *store.DB, bus *event.Bus, s *seeded, recv *receiver, b int, o deliverOptions) error {
	n := min(o.batch, o.events-b*o.batch)
	ids := make([]uuid.UUID, n)
	evs := make([]event.Event, n)
	actor := s.userID
	for i := range n {
		ids[i] = uuid.New()
		num := b*o.batch + i + 1
		evs[i] = issue.Created{
			Subject: issue.Subject{ProjectID: s.projectID, ProjectKey: s.key, IssueID: ids[i],
				IssueKey: fmt.Sprintf("%s-%d", s.key, 1_000_000+num), Title: fmt.Sprintf("Delivered issue %d", num)},
			By:   issue.By{ID: &actor, Email: s.email},
			Type: "TASK", Priority: "MEDIUM", StatusID: s.statusID, ReporterID: s.userID, At: time.Now(),
		}
	}
	return store.InTx(ctx, db.Bun, func(ctx context.Context, tx bun.Tx) error {
		if err := bus.Emit(ctx, tx, evs...); err != nil {
			return err
		}
		recv.commit(ids, time.Now())
		return nil
	})
}

// runDeliver is the delivery phase: a webhook on the seeded project pointing at a local
// receiver, n worker processes, o.events events, optionally a worker killed mid-run.
func runDeliver(ctx context.Context, db *store.DB, dbURL string, bus *event.Bus, c *client, s *seeded, o deliverOptions) (deliverResult, error) {
	const prefix = "X-Taskweave"
	recv := newReceiver(prefix)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return deliverResult{}, err
	}
	hs := &fasthttp.Server{Handler: recv.handle, ReadTimeout: time.Minute}
	go func() { _ = hs.Serve(ln) }()
	defer func() { _ = hs.Shutdown() }()

	body, _ := json.Marshal(map[string]any{"url": "http://" + ln.Addr().String() + "/hook", "events": []string{"issue.created"}})
	raw, err := c.do(ctx, http.MethodPost, "/api/v1/projects/"+s.key+"/webhooks", s.token, body, http.StatusCreated, true)
	if err != nil {
		return deliverResult{}, fmt.Errorf("create webhook: %w", err)
	}
	var created struct {
		PlaintextSecret string `json:"plaintextSecret"`
	}
	if err := json.Unmarshal(raw, &created); err != nil {
		return deliverResult{}, err
	}
	recv.secret = created.PlaintextSecret

	env := []string{
		"TW_DATABASE_URL=" + dbURL, "TW_JWT_SECRET=" + benchJWTSecret,
		"TW_WEBHOOK_ALLOW_PRIVATE=true", "TW_LOG_LEVEL=warn", "TW_WEBHOOK_HEADER_PREFIX=" + prefix,
	}
	if o.workerConns > 0 {
		env = append(env, fmt.Sprintf("TW_DATABASE_MAX_CONNS=%d", o.workerConns))
	}
	if o.crash {
		// A killed worker's jobs are rescued once they have been running longer than
		// TW_JOB_RESCUE_AFTER; short timeouts and retry delays keep the run short.
		env = append(env, "TW_JOB_TIMEOUT=10s", "TW_JOB_RESCUE_AFTER=16s", "TW_WEBHOOK_RETRY_DELAYS=1s,2s")
	}
	// Start from a settled database: the earlier phases' dirty pages and dead rows are
	// written and vacuumed now, not by a checkpoint or autovacuum during the measurement.
	if err := settle(ctx, db); err != nil {
		return deliverResult{}, err
	}
	procs, err := startWorkers(ctx, o.workers, env)
	if err != nil {
		return deliverResult{}, err
	}
	defer procs.stop()
	if err := procs.ready(ctx); err != nil {
		return deliverResult{}, err
	}

	// Warm-up, as for the other phases: the workers' connection pools, River's fetch loop
	// and the HTTP connections to the receiver are set up before the clock starts.
	if o.warmup > 0 {
		w := o
		w.events = o.warmup
		if err := emitEvents(ctx, db, bus, s, recv, w); err != nil {
			return deliverResult{}, fmt.Errorf("warm-up: %w", err)
		}
		if !recv.await(o.warmup, o.wait) {
			return deliverResult{}, errors.New("warm-up: not every delivery arrived before the deadline")
		}
		recv.reset()
	}

	res := deliverResult{events: o.events, killedAt: -1}
	killed := make(chan struct{})
	if o.crash {
		go func() {
			defer close(killed)
			for recv.distinct.Load() < int64(o.events/3) {
				time.Sleep(5 * time.Millisecond)
			}
			res.killedAt = int(recv.distinct.Load())
			_ = procs.kill(0)
		}()
	} else {
		close(killed)
	}
	cpuStart, cpuOK := machineCPU()
	start := time.Now()
	if err := emitEvents(ctx, db, bus, s, recv, o); err != nil {
		return res, fmt.Errorf("emit: %w", err)
	}
	res.emitted = time.Since(start)
	recv.await(o.events, o.wait)
	if cpuEnd, ok := machineCPU(); ok && cpuOK {
		res.cpu = cpuEnd.minus(cpuStart)
	}
	<-killed
	if o.crash {
		// The killed worker's running jobs come back only after River rescues them
		// (TW_JOB_RESCUE_AFTER, then the rescuer's next pass): wait until no delivery job
		// is left unfinished, so the repeats they cause are counted too.
		res.rescued, res.drained = waitDrained(ctx, db, 3*time.Minute)
		res.recovered = time.Since(start)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	res.distinct = int(recv.distinct.Load())
	res.dups = int(recv.dups.Load())
	res.badSig = int(recv.badSig.Load())
	res.elapsed = recv.last.Sub(start)
	res.latencies = slices.Clone(recv.latencies)
	slices.Sort(res.latencies)
	if res.distinct < o.events {
		return res, errors.New("not every delivery arrived before the deadline")
	}
	return res, nil
}

// settle vacuums and analyzes the bench database and forces a checkpoint.
func settle(ctx context.Context, db *store.DB) error {
	for _, stmt := range []string{"VACUUM (ANALYZE)", "CHECKPOINT"} {
		if _, err := db.Pool.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("settle: %s: %w", stmt, err)
		}
	}
	return nil
}
