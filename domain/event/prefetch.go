package event

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// Prefetch is a value a consumer reads for the events of one project (a toggle, the
// rules or webhooks it has), which an emitter may read ahead: as one more column of a
// statement it runs anyway, before it takes its locks. Emit's memo then holds the
// value under Key, and the consumer's Memo call finds it instead of querying while the
// emitter holds its locks. A consumer that registers none works as before.
type Prefetch struct {
	// Key is the memo key the consumer reads the value under, for a project.
	Key func(projectID uuid.UUID) string
	// SQL is a scalar expression of the value as text; project is the placeholder of
	// the project id in the emitter's statement.
	SQL func(project string) string
	// Decode turns the text into the value the consumer's Memo call expects (the type
	// must be the same, or Memo panics).
	Decode func(text string) (any, error)
}

// RegisterPrefetch adds a prefetch for the named events. Call it while wiring.
func (b *Bus) RegisterPrefetch(p Prefetch, names ...string) {
	if b.prefetches == nil {
		b.prefetches = map[string][]Prefetch{}
	}
	for _, n := range names {
		b.prefetches[n] = append(b.prefetches[n], p)
	}
}

// Prefetches returns the prefetches of the named events, in registration order.
func (b *Bus) Prefetches(names ...string) []Prefetch {
	var out []Prefetch
	for _, n := range names {
		out = append(out, b.prefetches[n]...)
	}
	return out
}

// WithPrefetched returns ctx carrying an Emit memo that holds the prefetched values of
// project (texts[i] is the value of ps[i]); an Emit on it, or on a context derived from
// it, reads them there.
func WithPrefetched(ctx context.Context, projectID uuid.UUID, ps []Prefetch, texts []string) (context.Context, error) {
	m, ok := ctx.Value(memoKey{}).(*memo)
	if !ok {
		m = &memo{values: map[string]any{}}
		ctx = context.WithValue(ctx, memoKey{}, m)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, p := range ps {
		v, err := p.Decode(texts[i])
		if err != nil {
			return ctx, fmt.Errorf("prefetched %s: %w", p.Key(projectID), err)
		}
		m.values[p.Key(projectID)] = v
	}
	return ctx, nil
}

// Memoized returns the value held under key by the current Emit's memo, if any,
// without loading it.
func Memoized[T any](ctx context.Context, key string) (T, bool) {
	var zero T
	m, ok := ctx.Value(memoKey{}).(*memo)
	if !ok {
		return zero, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[key].(T)
	if !ok {
		return zero, false
	}
	return v, true
}
