// Command soak runs Taskweave as an operator does (a migrated database, one `api` and one
// `worker` process of a freshly built binary) under a steady mixed load for a long time,
// and reports what a soak must show: every answer (no client retries), latency, the
// processes' resident memory and goroutines after the warm-up and at the end, and the
// webhook deliveries received with their duplicates (docs/performance.md#soak).
//
//	go run ./bench/soak [-d 10m] [-rate 200] [-warmup 1m]
//
// It needs TW_TEST_DATABASE_URL (a superuser; scripts/pg.sh prints one) and creates and
// drops a database of its own.
package main

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	d := flag.Duration("d", 10*time.Minute, "how long the load runs")
	rate := flag.Int("rate", 200, "requests per second offered")
	warmup := flag.Duration("warmup", time.Minute, "when the baseline of memory and goroutines is taken")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *d, *rate, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// sample is one reading of both processes.
type sample struct {
	at                time.Duration
	apiRSS, workerRSS int64 // KiB
	apiGor, workerGor int
}

func run(ctx context.Context, d time.Duration, rate int, warmup time.Duration) error {
	admin := os.Getenv("TW_TEST_DATABASE_URL")
	if admin == "" {
		admin = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	dir, err := os.MkdirTemp("", "taskweave-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "taskweave")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/taskweave").CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v: %s", err, out)
	}
	dbName := "tw_soak_" + randHex(6)
	dbURL, err := createDB(ctx, admin, dbName)
	if err != nil {
		return err
	}
	defer dropDB(admin, dbName)

	recv := newReceiver()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(ln, recv) }()
	addrs := freeAddrs(2)
	apiAddr, workerAddr := addrs[0], addrs[1]
	env := append(os.Environ(), "TW_DATABASE_URL="+dbURL, "TW_JWT_SECRET=soak-secret-soak-secret-soak-secret!",
		"TW_WEBHOOK_ALLOW_PRIVATE=true", "TW_ATTACHMENTS_DIR="+filepath.Join(dir, "att"), "TW_LOG_LEVEL=warn")
	if out, err := command(bin, "migrate", env).CombinedOutput(); err != nil {
		return fmt.Errorf("migrate: %v: %s", err, out)
	}
	api := command(bin, "api", append(slices.Clone(env), "TW_HTTP_ADDR="+apiAddr))
	worker := command(bin, "worker", append(slices.Clone(env), "TW_HTTP_ADDR="+workerAddr))
	for _, c := range []*exec.Cmd{api, worker} {
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			return err
		}
		defer func(c *exec.Cmd) { _ = c.Process.Signal(os.Interrupt); _ = c.Wait() }(c)
	}
	base := "http://" + apiAddr
	if err := waitOK(ctx, base+"/readyz"); err != nil {
		return err
	}
	if err := waitOK(ctx, "http://"+workerAddr+"/readyz"); err != nil {
		return err
	}

	s, err := setup(ctx, base, "http://"+ln.Addr().String()+"/hook")
	if err != nil {
		return err
	}
	fmt.Printf("soak: %s at %d req/s offered, api pid %d, worker pid %d\n", d, rate, api.Process.Pid, worker.Process.Pid)

	var (
		mu        sync.Mutex
		latencies []time.Duration
		statuses  = map[string]int{}
		samples   []sample
		events    atomic.Int64 // webhook events the load caused (creates and moves)
	)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 30 * time.Second}
	sem := make(chan struct{}, 256)
	var wg sync.WaitGroup
	start := time.Now()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	probe := time.NewTicker(10 * time.Second)
	defer probe.Stop()
	take := func() {
		smp := sample{at: time.Since(start).Round(time.Second)}
		smp.apiRSS, smp.workerRSS = rss(api.Process.Pid), rss(worker.Process.Pid)
		smp.apiGor = goroutines(base + "/metrics")
		smp.workerGor = goroutines("http://" + workerAddr + "/metrics")
		mu.Lock()
		samples = append(samples, smp)
		mu.Unlock()
	}
	n := 0
loop:
	for time.Since(start) < d {
		select {
		case <-ctx.Done():
			break loop
		case <-probe.C:
			go take()
		case <-tick.C:
			n++
			req, causes := s.next(n)
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				t0 := time.Now()
				code, err := do(client, s, req)
				lat := time.Since(t0)
				key := strconv.Itoa(code)
				if err != nil {
					key = "transport: " + err.Error()
				}
				mu.Lock()
				statuses[key]++
				latencies = append(latencies, lat)
				mu.Unlock()
				if err == nil && code < 300 && causes {
					events.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	take()

	// Deliveries: every event that caused one, received once.
	want := events.Load()
	deadline := time.Now().Add(3 * time.Minute)
	for recv.unique() < want && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}

	slices.Sort(latencies)
	pct := func(p float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))]
	}
	total, errs := 0, 0
	keys := make([]string, 0, len(statuses))
	for k, v := range statuses {
		total += v
		keys = append(keys, k)
		if !strings.HasPrefix(k, "2") {
			errs += v
		}
	}
	slices.Sort(keys)
	fmt.Printf("requests: %d in %s (%.1f/s), errors (non-2xx or transport): %d\n", total, elapsed.Round(time.Second),
		float64(total)/elapsed.Seconds(), errs)
	for _, k := range keys {
		fmt.Printf("  %s: %d\n", k, statuses[k])
	}
	fmt.Printf("latency: p50 %s, p99 %s, max %s\n", pct(.5), pct(.99), pct(1))
	fmt.Printf("webhooks: %d events, %d delivered, %d duplicates (same delivery id twice)\n", want, recv.unique(), recv.duplicates())
	fmt.Println("samples (time, api RSS KiB / goroutines, worker RSS KiB / goroutines):")
	var base0 *sample
	for i := range samples {
		smp := samples[i]
		if base0 == nil && smp.at >= warmup {
			base0 = &samples[i]
		}
		fmt.Printf("  %6s  api %7d / %4d   worker %7d / %4d\n", smp.at, smp.apiRSS, smp.apiGor, smp.workerRSS, smp.workerGor)
	}
	if base0 != nil {
		last := samples[len(samples)-1]
		fmt.Printf("after warm-up (%s) to the end: api RSS %+d KiB, goroutines %+d; worker RSS %+d KiB, goroutines %+d\n",
			base0.at, last.apiRSS-base0.apiRSS, last.apiGor-base0.apiGor, last.workerRSS-base0.workerRSS, last.workerGor-base0.workerGor)
	}
	if errs > 0 || recv.duplicates() > 0 || recv.unique() < want {
		return errors.New("the soak saw errors, lost or duplicate deliveries")
	}
	return nil
}

// state is what the load works on.
type state struct {
	base, token, key string
	statuses         []string
	mu               sync.Mutex
	issues           []string
	rng              *rand.Rand
}

type request struct {
	method, url, token string
	body               []byte
	// created is set on a create: its reply's key joins the issues moves pick from.
	created bool
}

// next is the n-th request: a create (25 %), a move (25 %), a page of the list (35 %),
// a read of one issue (10 %) or a comment (5 %), the last four of an issue whose create
// has been answered; causes says whether it emits a webhook (creates: issue.created).
func (s *state) next(n int) (request, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rng.IntN(100)
	if len(s.issues) == 0 || r < 25 {
		return request{method: "POST", url: s.base + "/api/v1/projects/" + s.key + "/issues", token: s.token,
			body: []byte(`{"title":"Soak issue ` + strconv.Itoa(n) + `"}`), created: true}, true
	}
	issue := s.issues[s.rng.IntN(len(s.issues))]
	switch {
	case r < 50:
		st := s.statuses[s.rng.IntN(len(s.statuses))]
		return request{method: "PATCH", url: s.base + "/api/v1/projects/" + s.key + "/issues/" + issue, token: s.token,
			body: []byte(`{"statusId":"` + st + `"}`)}, false
	case r < 85:
		return request{method: "GET", url: s.base + "/api/v1/projects/" + s.key + "/issues?size=50&page=" + strconv.Itoa(s.rng.IntN(5)), token: s.token}, false
	case r < 95:
		return request{method: "GET", url: s.base + "/api/v1/projects/" + s.key + "/issues/" + issue, token: s.token}, false
	default:
		return request{method: "POST", url: s.base + "/api/v1/projects/" + s.key + "/issues/" + issue + "/comments", token: s.token,
			body: []byte(`{"body":"soak comment"}`)}, false
	}
}

// created adds an answered create's key.
func (s *state) created(body []byte) {
	var m struct {
		Key string `json:"key"`
	}
	if json.Unmarshal(body, &m) == nil && m.Key != "" {
		s.mu.Lock()
		s.issues = append(s.issues, m.Key)
		s.mu.Unlock()
	}
}

func setup(ctx context.Context, base, hook string) (*state, error) {
	c := http.DefaultClient
	post := func(path, token string, body any) (map[string]any, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, "POST", base+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 {
			return nil, fmt.Errorf("POST %s: %d %s", path, res.StatusCode, raw)
		}
		m := map[string]any{}
		_ = json.Unmarshal(raw, &m)
		return m, nil
	}
	// The access token lives 15 minutes, longer than a 10-minute soak (-d above 14m
	// needs TW_ACCESS_TOKEN_TTL raised in the environment).
	auth, err := post("/api/v1/auth/register", "", map[string]any{"email": "soak@example.com", "displayName": "Soak", "password": "correct-horse-battery"})
	if err != nil {
		return nil, err
	}
	token := auth["accessToken"].(string)
	if _, err := post("/api/v1/projects", token, map[string]any{"key": "SOAK", "name": "Soak"}); err != nil {
		return nil, err
	}
	if _, err := post("/api/v1/projects/SOAK/webhooks", token, map[string]any{"url": hook, "events": []string{"issue.created"}}); err != nil {
		return nil, err
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/projects/SOAK/workflow", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var wf struct {
		Statuses []struct {
			ID string `json:"id"`
		} `json:"statuses"`
	}
	if err := json.NewDecoder(res.Body).Decode(&wf); err != nil {
		return nil, err
	}
	s := &state{base: base, token: token, key: "SOAK", rng: rand.New(rand.NewPCG(1, 2))}
	for _, st := range wf.Statuses {
		s.statuses = append(s.statuses, st.ID)
	}
	return s, nil
}

func do(c *http.Client, s *state, r request) (int, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, r.url, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if r.created && res.StatusCode == http.StatusCreated {
		b, _ := io.ReadAll(res.Body)
		s.created(b)
		return res.StatusCode, nil
	}
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, nil
}

// receiver counts webhook deliveries by delivery id.
type receiver struct {
	mu   sync.Mutex
	seen map[string]int
}

func newReceiver() *receiver { return &receiver{seen: map[string]int{}} }

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	r.mu.Lock()
	r.seen[req.Header.Get("X-Taskweave-Delivery")]++
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) unique() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.seen))
}

func (r *receiver) duplicates() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.seen {
		n += c - 1
	}
	return n
}

// rss is a process's resident memory in KiB (Linux /proc).
func rss(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return -1
}

// goroutines reads go_goroutines from a /metrics page (-1 when it cannot).
func goroutines(u string) int {
	res, err := http.Get(u)
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return int(f)
		}
	}
	return -1
}

func command(bin, sub string, env []string) *exec.Cmd {
	c := exec.Command(bin, sub)
	c.Env = env
	return c
}

func waitOK(ctx context.Context, u string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if res, err := http.Get(u); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not ready within a minute", u)
}

// freeAddrs returns n distinct free loopback addresses (held together while chosen, so
// no two are the same port).
func freeAddrs(n int) []string {
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		defer l.Close()
		out = append(out, l.Addr().String())
	}
	return out
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}

func createDB(ctx context.Context, admin, name string) (string, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func dropDB(admin, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, admin); err == nil {
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		conn.Close(ctx)
	}
}
