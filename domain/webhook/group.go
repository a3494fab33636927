package webhook

import (
	"context"
	"sync"
	"time"
)

// groupTimeout bounds one grouped statement. It runs on a context of its own, not on the
// job that happened to start it, so a cancelled job never fails the others' work.
const groupTimeout = 10 * time.Second

// groupMax is the most calls one grouped statement serves.
const groupMax = 256

// group runs many goroutines' small statements as one: calls that arrive while a
// statement is running queue up and go together in the next one (group commit), so
// under load a worker process makes a handful of statements per batch of deliveries
// instead of one per delivery, and when idle a call runs at once with no added wait.
// fn receives the queued inputs and returns one output (or error) per input.
type group[In, Out any] struct {
	fn func(ctx context.Context, in []In) ([]Out, []error, error)

	mu      sync.Mutex
	queue   []*groupCall[In, Out]
	running bool
}

type groupCall[In, Out any] struct {
	in   In
	out  Out
	err  error
	done chan struct{}
}

// do queues in and waits for its result. Every call is answered, ctx or not: the caller
// waits for its statement even when its own context ends, since the statement may have
// committed (the delivery worker must not report an outcome it did not record).
func (g *group[In, Out]) do(in In) (Out, error) {
	c := &groupCall[In, Out]{in: in, done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if !g.running {
		g.running = true
		g.mu.Unlock()
		g.drain()
	} else {
		g.mu.Unlock()
	}
	<-c.done
	return c.out, c.err
}

// drain runs queued calls, groupMax at a time, until the queue is empty. It runs on the
// goroutine of the call that found the group idle, and hands the rest to a new goroutine
// once that call's own batch is answered, so no caller waits for others' batches.
func (g *group[In, Out]) drain() {
	g.mu.Lock()
	n := min(len(g.queue), groupMax)
	batch := make([]*groupCall[In, Out], n)
	copy(batch, g.queue)
	g.queue = append(g.queue[:0], g.queue[n:]...)
	g.mu.Unlock()

	ins := make([]In, n)
	for i, c := range batch {
		ins[i] = c.in
	}
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	outs, errs, err := g.fn(ctx, ins)
	cancel()
	for i, c := range batch {
		switch {
		case err != nil:
			c.err = err
		case errs != nil && errs[i] != nil:
			c.err = errs[i]
		default:
			c.out = outs[i]
		}
		close(c.done)
	}

	g.mu.Lock()
	if len(g.queue) == 0 {
		g.running = false
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	go g.drain()
}
