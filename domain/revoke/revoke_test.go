package revoke_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/realtime"
	"github.com/taskweave/taskweave/domain/revoke"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestParse(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	for dest, want := range map[string]revoke.Notice{
		"/internal/access/users/" + id.String(): {User: id},
		"/internal/access/projects/ABC":         {ProjectKey: "ABC"},
	} {
		n, ok := revoke.Parse(dest)
		require.True(t, ok, dest)
		require.Equal(t, want, n, dest)
	}
	for _, dest := range []string{"/topic/projects/ABC", "/user/" + id.String() + "/queue/notifications",
		"/internal/access/users/not-a-uuid", "/internal/access/projects/", "/internal/access/", ""} {
		_, ok := revoke.Parse(dest)
		require.False(t, ok, dest)
	}
}

// TestNoticesTravelOnTheRealtimeChannel: the realtime listener every API process runs
// receives a committed notice as a message whose destination Parse reads back, and
// nothing of a rolled-back one.
func TestNoticesTravelOnTheRealtimeChannel(t *testing.T) {
	t.Parallel()
	require.Equal(t, realtime.Channel, revoke.Channel)
	db := storetest.NewDB(t)
	got := make(chan realtime.Message, 16)
	l := realtime.NewListener(db.Pool.Config().ConnConfig, slog.New(slog.NewTextHandler(io.Discard, nil)), func(m realtime.Message) { got <- m })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	require.NoError(t, l.WaitReady(wctx))

	rolledBack, committed := uuid.New(), uuid.New()
	boom := errors.New("roll back")
	require.ErrorIs(t, store.InTx(ctx, db.Bun, func(ctx context.Context, tx bun.Tx) error {
		if err := revoke.Users(ctx, tx, rolledBack); err != nil {
			return err
		}
		return boom
	}), boom)
	require.NoError(t, store.InTx(ctx, db.Bun, func(ctx context.Context, tx bun.Tx) error {
		if err := revoke.Users(ctx, tx, committed); err != nil {
			return err
		}
		return revoke.Project(ctx, tx, "ABC")
	}))
	for _, want := range []revoke.Notice{{User: committed}, {ProjectKey: "ABC"}} {
		select {
		case m := <-got:
			n, ok := revoke.Parse(m.Destination)
			require.True(t, ok, m.Destination)
			require.Equal(t, want, n, "notifications arrive in commit order; the rolled-back one never")
			require.JSONEq(t, `{}`, string(m.Body))
		case <-time.After(10 * time.Second):
			t.Fatal("no notice within 10 s")
		}
	}
}
