package work

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/board"
)

// boardCacheBudget bounds the encoded boards one API process keeps. A 500-issue board
// is about 350 KB, so this holds the boards of a few hundred busy projects.
const boardCacheBudget = 64 << 20

// boardCache keeps the last encoded board of each project with the board.Head Stamp it
// was built under. A board is hundreds of kilobytes of JSON, and reading and encoding it
// costs far more than the head query that proves it unchanged, so a hit costs one
// small query and a memory copy. Correctness never rests on it: every request reads
// the Stamp from Postgres, so a replica whose entry is stale simply rebuilds it.
type boardCache struct {
	mu      sync.Mutex
	entries map[uuid.UUID]boardEntry
	size    int
	budget  int
	// build makes concurrent misses for the same project and stamp share one build.
	build singleflight.Group
}

// boardEntry is an encoded board with the Stamp it was built under and its ETag
// (core.ETag of body), computed once so a poll answered 304 does not hash the board.
type boardEntry struct {
	stamp [32]byte
	body  []byte
	etag  string
}

func newBoardCache(budget int) *boardCache {
	return &boardCache{entries: map[uuid.UUID]boardEntry{}, budget: budget}
}

// body returns the encoded board of project under head, with its ETag, from the cache
// when its stamp matches, else built by load and kept. The returned slice is shared and
// never changed.
func (bc *boardCache) body(project uuid.UUID, head *board.Head, load func() (*board.Board, error)) ([]byte, string, error) {
	bc.mu.Lock()
	e, ok := bc.entries[project]
	bc.mu.Unlock()
	if ok && e.stamp == head.Stamp {
		return e.body, e.etag, nil
	}
	key := project.String() + hex.EncodeToString(head.Stamp[:])
	v, err, _ := bc.build.Do(key, func() (any, error) {
		b, err := load()
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(toBoardResponse(b)); err != nil {
			return nil, err
		}
		e := boardEntry{stamp: head.Stamp, body: buf.Bytes()}
		e.etag = core.ETag(e.body)
		bc.put(project, e)
		return e, nil
	})
	if err != nil {
		return nil, "", err
	}
	e = v.(boardEntry)
	return e.body, e.etag, nil
}

// put stores e, evicting other projects' boards (in map order, which Go randomizes)
// while the budget is exceeded. A board larger than a quarter of the budget is not kept.
func (bc *boardCache) put(project uuid.UUID, e boardEntry) {
	if len(e.body) > bc.budget/4 {
		return
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if old, ok := bc.entries[project]; ok {
		bc.size -= len(old.body)
	}
	bc.entries[project] = e
	bc.size += len(e.body)
	for id, old := range bc.entries {
		if bc.size <= bc.budget {
			break
		}
		if id != project {
			delete(bc.entries, id)
			bc.size -= len(old.body)
		}
	}
}
