package event_test

import (
	"context"
	"testing"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/event"
)

type named string

func (n named) EventName() string { return string(n) }

// TestMemoLoadsOncePerEmit: consumers of one Emit call share what they memoize (the
// audit toggles), a later Emit loads again, and outside Emit nothing is cached.
func TestMemoLoadsOncePerEmit(t *testing.T) {
	t.Parallel()
	loads := 0
	load := func() (bool, error) { loads++; return true, nil }
	bus := event.NewBus(nil)
	var seen []string
	bus.Register(func(ctx context.Context, _ bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
		on, err := event.Memo(ctx, "toggle", load)
		require.True(t, on)
		seen = append(seen, ev.EventName())
		return nil, err
	}, "a", "b")
	bus.RegisterBatch(func(ctx context.Context, _ bun.Tx, evs []event.Event) ([]river.InsertManyParams, error) {
		_, err := event.Memo(ctx, "toggle", load)
		seen = append(seen, "batch of "+string(rune('0'+len(evs))))
		return nil, err
	}, "b")

	ctx := context.Background()
	require.NoError(t, bus.Emit(ctx, bun.Tx{}, named("a"), named("b"), named("b"), named("c")))
	require.Equal(t, 1, loads, "one load for the whole Emit call")
	require.Equal(t, []string{"a", "b", "b", "batch of 2"}, seen)
	require.NoError(t, bus.Emit(ctx, bun.Tx{}, named("a")))
	require.Equal(t, 2, loads, "a new Emit call reads again")
	_, _ = event.Memo(ctx, "toggle", load)
	_, _ = event.Memo(ctx, "toggle", load)
	require.Equal(t, 4, loads, "no memo outside Emit")
}
