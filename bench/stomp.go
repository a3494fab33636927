package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/taskweave/taskweave/api/stomp/stomptest"
	"github.com/taskweave/taskweave/store"
)

// Fan-out phase: how many issue moves are measured (after one warm-up move), how long
// one move may take to reach every client, and the target.
const (
	fanoutMoves     = 20
	fanoutWait      = 10 * time.Second
	targetFanoutP99 = 100 * time.Millisecond
	// targetFanoutRSSMiB bounds the API process's peak resident set in the phase.
	targetFanoutRSSMiB = 150
)

// fanoutResult is the fan-out phase: per move the time until every client had the
// message, per client and move the time until that client had it, both from just before
// the PATCH was sent.
type fanoutResult struct {
	clients int
	moves   int
	connect time.Duration
	all     []time.Duration
	each    []time.Duration
	// missing counts client-moves that did not arrive within fanoutWait.
	missing int
	// memBefore and memAfter are the process's Go memory in use (heap and stacks, after
	// a GC) before the clients connect and once all are subscribed: both ends of every
	// connection, since the clients run in the server's process.
	memBefore, memAfter uint64
	rss                 string
	// api is the separate API process's resident set (KiB) before the clients connect,
	// once all are subscribed, and at its peak after the moves; zero in-process.
	api struct{ pid, before, after, peak int }
}

// fanoutPhase runs the fan-out phase against a separate `taskweave api` process on the
// bench's database, so the server's memory is measured without the clients', or against
// the bench's own server (-fanout-inprocess).
func fanoutPhase(ctx context.Context, dbURL, inProcessURL string, db *store.DB, c *client, s *seeded, o options) (fanoutResult, error) {
	if o.fanoutInProcess {
		return runFanout(ctx, inProcessURL, db, c, s, o.fanoutClients, 0)
	}
	procs, err := startProcesses(ctx, "api", 1, procEnv(dbURL))
	if err != nil {
		return fanoutResult{}, err
	}
	defer procs.stop()
	if err := procs.ready(ctx); err != nil {
		return fanoutResult{}, err
	}
	base := "http://" + procs.addrs[0]
	return runFanout(ctx, base, db, newClient(base, 4), s, o.fanoutClients, procs.cmds[0].Process.Pid)
}

// goMemory is the heap and stack memory in use after a collection.
func goMemory() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// runFanout opens clients STOMP WebSocket connections to baseURL, subscribes each to
// the seeded project's board topic, then moves one seeded issue fanoutMoves times through
// PATCH /issues/{key} {statusId}, waiting for every client after each move.
// serverPID is the API process when it runs apart (0: in this process).
func runFanout(ctx context.Context, baseURL string, db *store.DB, c *client, s *seeded, clients, serverPID int) (fanoutResult, error) {
	res := fanoutResult{clients: clients, moves: fanoutMoves}
	res.api.pid = serverPID
	var (
		issueKey string
		from     uuid.UUID
	)
	if err := db.Pool.QueryRow(ctx, "SELECT key, status_id FROM issues WHERE project_id = $1 ORDER BY number LIMIT 1",
		s.projectID).Scan(&issueKey, &from); err != nil {
		return res, fmt.Errorf("fan-out issue: %w", err)
	}
	statuses, err := fanoutStatuses(ctx, db, s)
	if err != nil {
		return res, err
	}
	// The moves start from the issue's current status (the board phase may have moved
	// it), so every move, the warm-up included, really changes it: a move to the status
	// it already has publishes nothing and would wait out fanoutWait.
	if i := slices.Index(statuses, from); i > 0 {
		statuses = slices.Concat(statuses[i:], statuses[:i])
	}

	// Connect and subscribe, 50 at a time.
	wsURL := "ws" + strings.TrimPrefix(baseURL, "http") + "/ws-stomp"
	conns := make([]*stomptest.Client, clients)
	defer func() {
		for _, cl := range conns {
			if cl != nil {
				_ = cl.Close()
			}
		}
	}()
	res.memBefore = goMemory()
	if serverPID != 0 {
		res.api.before = procStatusKiB(strconv.Itoa(serverPID), "VmRSS")
	}
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(50)
	for i := range conns {
		g.Go(func() error {
			cl, err := stomptest.Dial(gctx, wsURL, "v12.stomp")
			if err != nil {
				return err
			}
			conns[i] = cl
			if _, err := cl.Connect(s.token, "0,0"); err != nil {
				return fmt.Errorf("client %d: %w", i, err)
			}
			if _, err := cl.Subscribe("board", "/topic/projects/"+s.key); err != nil {
				return fmt.Errorf("client %d: %w", i, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return res, fmt.Errorf("fan-out connect: %w", err)
	}
	res.connect = time.Since(start)
	res.memAfter = goMemory()
	res.rss = processMemory()
	if serverPID != 0 {
		res.api.after = procStatusKiB(strconv.Itoa(serverPID), "VmRSS")
	}

	// Each client's reader stamps the arrival of the current move's message; the last
	// one of a move closes its done channel.
	var (
		current  atomic.Int64 // index of the move under way, -1 between moves
		expected = make([]string, fanoutMoves+1)
		base     = time.Now()
		arrivals = make([][]atomic.Int64, fanoutMoves+1) // 1 + ns since base (monotonic), 0 = not yet
		counts   = make([]atomic.Int64, fanoutMoves+1)
		done     = make([]chan struct{}, fanoutMoves+1)
		readers  sync.WaitGroup
	)
	for m := range arrivals {
		arrivals[m] = make([]atomic.Int64, clients)
		expected[m] = statuses[(m+1)%len(statuses)].String()
		done[m] = make(chan struct{})
	}
	current.Store(-1)
	for i, cl := range conns {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				f, err := cl.Read(time.Hour)
				if err != nil {
					return // closed at the end of the phase
				}
				at := int64(time.Since(base)) + 1
				var msg struct {
					NewStatusID string `json:"newStatusId"`
				}
				if f.Command != "MESSAGE" || json.Unmarshal(f.Body, &msg) != nil {
					continue
				}
				m := current.Load()
				if m >= 0 && msg.NewStatusID == expected[m] && arrivals[m][i].CompareAndSwap(0, at) {
					if counts[m].Add(1) == int64(clients) {
						close(done[m])
					}
				}
			}
		}()
	}
	defer readers.Wait()
	defer func() {
		for _, cl := range conns {
			_ = cl.Close()
		}
	}()

	path := "/api/v1/projects/" + s.key + "/issues/" + issueKey
	for m := 0; m <= fanoutMoves; m++ { // move 0 warms up and is not counted
		current.Store(int64(m))
		body := fmt.Appendf(nil, `{"statusId":%q}`, expected[m])
		sent := time.Now()
		if _, err := c.do(ctx, http.MethodPatch, path, s.token, body, http.StatusOK, false); err != nil {
			return res, fmt.Errorf("fan-out move %d: %w", m, err)
		}
		complete := true
		select {
		case <-done[m]:
		case <-time.After(fanoutWait):
			complete = false
		case <-ctx.Done():
			return res, ctx.Err()
		}
		current.Store(-1)
		if m == 0 {
			continue
		}
		var last time.Duration
		for i := range arrivals[m] {
			at := arrivals[m][i].Load()
			if at == 0 {
				res.missing++
				continue
			}
			d := time.Duration(at-1) - sent.Sub(base)
			res.each = append(res.each, d)
			last = max(last, d)
		}
		if complete {
			res.all = append(res.all, last)
		}
	}
	if serverPID != 0 {
		res.api.peak = procStatusKiB(strconv.Itoa(serverPID), "VmHWM")
	}
	slices.Sort(res.all)
	slices.Sort(res.each)
	return res, nil
}

// fanoutStatuses lists the project's statuses; the default workflow has no transition
// rows, so any move between them is allowed.
func fanoutStatuses(ctx context.Context, db *store.DB, s *seeded) ([]uuid.UUID, error) {
	rows, err := db.Pool.Query(ctx, `SELECT st.id FROM workflow_statuses AS st JOIN projects AS p ON p.workflow_id = st.workflow_id
		WHERE p.id = $1 ORDER BY st.position`, s.projectID)
	if err != nil {
		return nil, fmt.Errorf("fan-out statuses: %w", err)
	}
	defer rows.Close()
	var ids []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ids) < 2 {
		return nil, fmt.Errorf("fan-out: the workflow has %d statuses, need 2", len(ids))
	}
	return ids, nil
}

// fanoutPct is the p-th percentile of sorted durations.
func fanoutPct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i].Round(10 * time.Microsecond)
}

// printFanout reports the fan-out phase and its verdict.
func printFanout(r fanoutResult) {
	fmt.Println()
	fmt.Printf("fan-out: %d STOMP clients subscribed to one board (connected and subscribed in %s), %d moves via PATCH\n",
		r.clients, r.connect.Round(time.Millisecond), r.moves)
	fmt.Printf("  until every client had it: p50 %s, p99 %s, max %s (%d of %d moves complete)\n",
		fanoutPct(r.all, 50), fanoutPct(r.all, 99), fanoutPct(r.all, 100), len(r.all), r.moves)
	fmt.Printf("  per client:                p50 %s, p99 %s, max %s; missing %d\n",
		fanoutPct(r.each, 50), fanoutPct(r.each, 99), fanoutPct(r.each, 100), r.missing)
	perConn := (float64(r.memAfter) - float64(r.memBefore)) / float64(max(r.clients, 1)) / 1024
	ends := "server and client ends"
	if r.api.pid != 0 {
		ends = "client ends only: the API runs apart"
	}
	fmt.Printf("  bench process Go memory with the connections open: %.1f MB more, %.1f KiB per connection (%s); process %s\n",
		(float64(r.memAfter)-float64(r.memBefore))/(1<<20), perConn, ends, r.rss)
	ok := r.missing == 0 && len(r.all) == r.moves && fanoutPct(r.all, 99) <= targetFanoutP99
	fmt.Printf("  every client p99 %s (target ≤ %s, none missing): %s\n", fanoutPct(r.all, 99), targetFanoutP99, verdict(ok))
	if r.api.pid != 0 {
		fmt.Printf("  API process RSS: %.1f MB before the clients, %.1f MB with %d open, peak %.1f MB; %.1f KiB per open connection\n",
			float64(r.api.before)/1024, float64(r.api.after)/1024, r.clients, float64(r.api.peak)/1024,
			float64(r.api.after-r.api.before)/float64(max(r.clients, 1)))
		fmt.Printf("  API RSS peak %.1f MB (target ≤ %d MB): %s\n", float64(r.api.peak)/1024, targetFanoutRSSMiB,
			verdict(r.api.peak <= targetFanoutRSSMiB*1024))
	}
}
