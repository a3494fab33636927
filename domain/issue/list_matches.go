package issue

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Matches keeps lists whose pages would otherwise cost what grows with the project:
// for a list of cf equalities alone in key order (the narrow copy of migration 0029),
// the numbers of every match; for the unfiltered list in update order, every number
// of the project in that order (listKept). Each is kept with the Postgres snapshot it
// was read under, so that a later page reads only its own rows and one index probe of
// the changes it depends on (filter_term_changes or issue_changes, migration 0058),
// proving that no transaction the snapshot did not see has changed them since.
// Correctness never rests on it: every read is proven against Postgres in the statement
// that reads the page, so a replica whose entry is stale reads the list again, and a
// process without one reads it every time. docs/performance.md#kept-lists has the
// design and the measurements.
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
	// built is when each key was last read whole to be kept (mayBuild), at most once
	// per rebuild.
	built   map[string]time.Time
	rebuild time.Duration
}

// matchEntry is the numbers of one kept list, in the list's order, with the snapshot
// (pg_snapshot as text) they were read under. Its numbers are never changed.
type matchEntry struct {
	nums []int32
	snap string
	used uint64
}

// MatchesBudget is the numbers an API process keeps (4 bytes each: 16 MB): the update
// order of some forty 100,000-issue projects, or the matches of a few hundred filtered
// lists of one.
const MatchesBudget = 4 << 20

// NewMatches makes an empty Matches holding at most budget numbers.
func NewMatches(budget int) *Matches {
	return &Matches{entries: map[string]*matchEntry{}, budget: budget, built: map[string]time.Time{}, rebuild: rebuildEvery}
}

// rebuildEvery is the least time between two reads of one list whole to keep it, and
// tooBigFor how long a list found too big to keep is not read whole again.
const (
	rebuildEvery = 10 * time.Second
	tooBigFor    = time.Hour
)

// mayBuild says whether key may be read whole now, and if so notes it: once per
// rebuildEvery, so a list whose entry is never current for long costs one whole read
// per that time, not one per request.
func (m *Matches) mayBuild(key string) bool {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if at, ok := m.built[key]; ok && now.Sub(at) < m.rebuild {
		return false
	}
	if len(m.built) >= 10_000 {
		for k, at := range m.built {
			if now.Sub(at) >= m.rebuild {
				delete(m.built, k)
			}
		}
	}
	m.built[key] = now
	return true
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

// put keeps nums under key, read under snap, replacing what key held, and returns the
// entry; nil when it is not kept. A set of more than a quarter of the budget is not
// kept: it would push out many others; and key is then not read whole again (mayBuild)
// for tooBigFor.
func (m *Matches) put(key string, nums []int32, snap string) *matchEntry {
	if snap == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(nums) > m.budget/4 {
		m.built[key] = time.Now().Add(tooBigFor)
		return nil
	}
	if old := m.entries[key]; old != nil {
		m.held -= len(old.nums)
		delete(m.entries, key)
	}
	for m.held+len(nums) > m.budget {
		m.evictOldest()
	}
	m.tick++
	e := &matchEntry{nums: nums, snap: snap, used: m.tick}
	m.entries[key] = e
	m.held += len(nums)
	return e
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

// TrimListChanges forgets the changes kept lists are proven against (filter_term_changes
// and issue_changes) below the horizon, and so every kept list read under a snapshot
// older than it: in one transaction it moves the horizon to the xmin the previous trim
// recorded and records the present one, then deletes the rows below the new horizon.
// Run hourly by the worker (list_change_trim), a kept list is proven current for one
// to two hours and then read again; the tables hold about two hours of writes. It
// returns the rows deleted.
func TrimListChanges(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("trim list changes: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// A database restored into another cluster (pg_dump) may hold ids ahead of the new
	// cluster's: a recorded horizon ahead of this transaction's own id is replaced by
	// the present xmin, and rows no transaction of this cluster can have written yet
	// (at or past the statement's snapshot's xmax: a transaction that began later is
	// not seen by it) go too. Until this runs, such rows only make their projects'
	// lists read whole.
	var horizon string
	if err := tx.QueryRow(ctx, `UPDATE list_change_horizon
		SET horizon = CASE WHEN next_horizon > pg_current_xact_id()
				THEN pg_snapshot_xmin(pg_current_snapshot()) ELSE next_horizon END,
			next_horizon = pg_snapshot_xmin(pg_current_snapshot())
		RETURNING horizon::text`).Scan(&horizon); err != nil {
		return 0, fmt.Errorf("trim list changes: %w", err)
	}
	var deleted int64
	for _, table := range []string{"filter_term_changes", "issue_changes"} {
		tag, err := tx.Exec(ctx, `DELETE FROM `+table+`
			WHERE xid < $1::xid8 OR xid >= pg_snapshot_xmax(pg_current_snapshot())`, horizon)
		if err != nil {
			return 0, fmt.Errorf("trim list changes: %w", err)
		}
		deleted += tag.RowsAffected()
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("trim list changes: %w", err)
	}
	return deleted, nil
}
