package main

import (
	"context"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/store/storetest"
)

// TestFanout runs the fan-out phase against a served API with 20 clients (set
// TW_BENCH_FANOUT_CLIENTS for more), so the phase is known to work before `make bench`
// depends on it. It checks completeness, not the latency target.
func TestFanout(t *testing.T) {
	t.Parallel()
	clients := 20
	if v := os.Getenv("TW_BENCH_FANOUT_CLIENTS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		clients = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db := storetest.NewDB(t)
	srv, err := wire(db)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.App.Listener(ln) }()
	t.Cleanup(func() { require.NoError(t, srv.App.ShutdownWithTimeout(5*time.Second)) })
	base := "http://" + ln.Addr().String()
	c := newClient(base, 4)
	s, err := seed(ctx, db, c, 10, false, true)
	require.NoError(t, err)

	r, err := runFanout(ctx, base, db, c, s, clients, 0)
	require.NoError(t, err)
	printFanout(r)
	require.Zero(t, r.missing)
	require.Len(t, r.all, fanoutMoves)
	require.Len(t, r.each, fanoutMoves*clients)
}
