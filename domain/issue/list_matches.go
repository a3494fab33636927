package issue

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Matches keeps, for a list of cf equalities alone in key order (the narrow copy of
// migration 0029), the numbers of every matching issue with the Postgres snapshot they
// were read under, so that the next page of the same filters reads only its own rows.
// A filtered total counts every match, and the matches of a big project are tens of
// thousands of rows read from the heap (a bitmap scan visits every page); kept, a page
// at any offset costs its fifty rows and one index probe of filter_term_changes
// (migration 0058) proving that no transaction the snapshot did not see has changed
// the project's terms since. Correctness never rests on it: every read is proven
// against Postgres in the statement that reads the page, so a replica whose entry is
// stale reads the matches again, and a process without one reads them every time.
// docs/performance.md#a-filtered-lists-matches-are-kept has the measurements.
//
// It is safe for concurrent use; the numbers held are bounded by its budget, the least
// recently used entries giving way.
type Matches struct {
	mu      sync.Mutex
	entries map[string]*matchEntry
	held    int // numbers held by all entries
	budget  int
	tick    uint64
	// hits counts the pages served from an entry (proven current).
	hits atomic.Int64
}

// matchEntry is the matches of one project and filter set, in key order, with the
// snapshot (pg_snapshot as text) they were read under. Its numbers are never changed.
type matchEntry struct {
	nums []int32
	snap string
	used uint64
}

// MatchesBudget is the numbers an API process keeps (4 bytes each: 16 MB), the
// matches of a few hundred filtered lists of a 100,000-issue project.
const MatchesBudget = 4 << 20

// NewMatches makes an empty Matches holding at most budget numbers.
func NewMatches(budget int) *Matches {
	return &Matches{entries: map[string]*matchEntry{}, budget: budget}
}

// get returns key's entry, or nil.
func (m *Matches) get(key string) *matchEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[key]
	if e != nil {
		m.tick++
		e.used = m.tick
	}
	return e
}

// put keeps nums under key, read under snap, replacing what key held. A set of more
// than a quarter of the budget is not kept: it would push out many others.
func (m *Matches) put(key string, nums []int32, snap string) {
	if len(nums) > m.budget/4 || snap == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.entries[key]; old != nil {
		m.held -= len(old.nums)
		delete(m.entries, key)
	}
	for m.held+len(nums) > m.budget {
		m.evictOldest()
	}
	m.tick++
	m.entries[key] = &matchEntry{nums: nums, snap: snap, used: m.tick}
	m.held += len(nums)
}

// drop forgets key's entry if it is still e (a concurrent read may have replaced it).
func (m *Matches) drop(key string, e *matchEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries[key] == e {
		m.held -= len(e.nums)
		delete(m.entries, key)
	}
}

// evictOldest forgets the least recently used entry. A scan of the map: entries are
// a few hundred at most, and an eviction follows a read of thousands of rows.
func (m *Matches) evictOldest() {
	var oldest string
	var at uint64
	first := true
	for k, e := range m.entries {
		if first || e.used < at {
			oldest, at, first = k, e.used, false
		}
	}
	if first {
		return
	}
	m.held -= len(m.entries[oldest].nums)
	delete(m.entries, oldest)
}

// TrimTermChanges forgets the filter_term_changes below the horizon, and so every kept
// list read under a snapshot older than it: in one transaction it moves the horizon to
// the xmin the previous trim recorded and records the present one, then deletes the
// rows below the new horizon. Run hourly by the worker (filter_term_trim), a kept list
// is proven current for one to two hours and then read again; the table holds about
// two hours of value writes. It returns the rows deleted.
func TrimTermChanges(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("trim filter term changes: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var horizon string
	if err := tx.QueryRow(ctx, `UPDATE filter_term_horizon
		SET horizon = next_horizon, next_horizon = pg_snapshot_xmin(pg_current_snapshot())
		RETURNING horizon::text`).Scan(&horizon); err != nil {
		return 0, fmt.Errorf("trim filter term changes: %w", err)
	}
	tag, err := tx.Exec(ctx, `DELETE FROM filter_term_changes WHERE xid < $1::xid8`, horizon)
	if err != nil {
		return 0, fmt.Errorf("trim filter term changes: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("trim filter term changes: %w", err)
	}
	return tag.RowsAffected(), nil
}
