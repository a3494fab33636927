// Package event is the one place where domain changes become River jobs. Domain code
// hands events (or ready-made job arguments) to the Bus inside its transaction; the Bus
// inserts the jobs on that same transaction, so they commit or roll back with the rows.
package event

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"
)

// Event is a domain event; Name is stable and used to route it to consumers.
type Event interface {
	EventName() string
}

// Consumer turns one event into the jobs it needs (audit row, webhook deliveries,
// automation runs, board push ...). It reads through tx and mostly leaves the work to
// the job; it may write rows that must commit with its jobs (webhook delivery records,
// whose ids the jobs carry), never rows the job could write itself.
type Consumer func(ctx context.Context, tx bun.Tx, ev Event) ([]river.InsertManyParams, error)

// BatchConsumer is a Consumer that takes every event of one Emit call it subscribes to
// at once, in emit order, so it can do its reads and writes for all of them in one
// statement each (webhook deliveries: one statement per transaction rather than per
// event, which also writes the jobs itself and so returns none).
type BatchConsumer func(ctx context.Context, tx bun.Tx, evs []Event) ([]river.InsertManyParams, error)

// Bus holds the insert-only River client (riverdatabasesql, sharing bun's *sql.Tx) and
// the consumers registered per event name.
type Bus struct {
	river      *river.Client[*sql.Tx]
	consumers  map[string][]Consumer
	batches    []batchConsumer
	prefetches map[string][]Prefetch
}

type batchConsumer struct {
	fn    BatchConsumer
	names map[string]bool
}

// NewBus builds an insert-only River client over db. It runs no jobs.
func NewBus(client *river.Client[*sql.Tx]) *Bus {
	return &Bus{river: client, consumers: map[string][]Consumer{}}
}

// RegisterBatch adds a batch consumer for the named events. Call it while wiring.
func (b *Bus) RegisterBatch(c BatchConsumer, names ...string) {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	b.batches = append(b.batches, batchConsumer{fn: c, names: set})
}

// Register adds a consumer for the named events. Call it while wiring, before serving.
func (b *Bus) Register(c Consumer, names ...string) {
	for _, n := range names {
		b.consumers[n] = append(b.consumers[n], c)
	}
}

// Emit fans the events out to their consumers and inserts every resulting job on tx.
func (b *Bus) Emit(ctx context.Context, tx bun.Tx, events ...Event) error {
	return b.EmitWith(ctx, tx, nil, events...)
}

// EmitWith is Emit inserting jobs beside the events' jobs, in the same InsertManyFastTx
// (the SLA monitor's report jobs with its escalations' events).
func (b *Bus) EmitWith(ctx context.Context, tx bun.Tx, jobs []river.InsertManyParams, events ...Event) error {
	ctx = WithMemo(ctx)
	params := jobs
	for _, ev := range events {
		for _, c := range b.consumers[ev.EventName()] {
			p, err := c(ctx, tx, ev)
			if err != nil {
				return fmt.Errorf("event %s: %w", ev.EventName(), err)
			}
			params = append(params, p...)
		}
	}
	for _, bc := range b.batches {
		var mine []Event
		for _, ev := range events {
			if bc.names[ev.EventName()] {
				mine = append(mine, ev)
			}
		}
		if len(mine) == 0 {
			continue
		}
		p, err := bc.fn(ctx, tx, mine)
		if err != nil {
			return fmt.Errorf("events %s…: %w", mine[0].EventName(), err)
		}
		params = append(params, p...)
	}
	return b.Enqueue(ctx, tx, params...)
}

// Enqueue inserts jobs on tx; they become visible to workers only when tx commits.
func (b *Bus) Enqueue(ctx context.Context, tx bun.Tx, params ...river.InsertManyParams) error {
	if len(params) == 0 {
		return nil
	}
	// The fast variant: nothing reads the inserted rows back, so none are returned and
	// decoded (through database/sql they come back as text, which cost more than the
	// insert itself). Uniqueness and the insert notification work the same.
	if _, err := b.river.InsertManyFastTx(ctx, tx.Tx, params); err != nil {
		return fmt.Errorf("insert jobs: %w", err)
	}
	return nil
}

// memoKey marks the per-Emit memo in a context.
type memoKey struct{}

// memo caches values consumers read on the emitting transaction, for the length of one
// Emit call: a request emitting five events reads the audit toggles once, not five times.
type memo struct {
	mu     sync.Mutex
	values map[string]any
}

// WithMemo gives ctx a memo of its own when it has none, for work that records audit
// entries and emits events in one transaction outside a single Emit call (the SLA
// monitor's batch): the audit toggles are then read once for all of it. Emit calls on
// the returned context share the memo.
func WithMemo(ctx context.Context) context.Context {
	if _, ok := ctx.Value(memoKey{}).(*memo); ok {
		return ctx
	}
	return context.WithValue(ctx, memoKey{}, &memo{values: map[string]any{}})
}

// Memo returns the value cached under key during the current Emit call, loading it once
// with load. Outside Emit (no memo in ctx) it simply calls load.
func Memo[T any](ctx context.Context, key string, load func() (T, error)) (T, error) {
	m, ok := ctx.Value(memoKey{}).(*memo)
	if !ok {
		return load()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.values[key]; ok {
		return v.(T), nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	m.values[key] = v
	return v, nil
}
