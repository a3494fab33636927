package task

import (
	"context"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// resultChunk is the size of one task_files row.
const resultChunk = 1 << 20

// File slots.
const (
	slotInput  = "input"
	slotResult = "result"
)

// fileWriter writes a task's file (its input or result) into task_files on tx, a chunk
// at a time, so a file of any size costs one chunk of memory.
type fileWriter struct {
	ctx  context.Context
	tx   bun.IDB
	task uuid.UUID
	slot string
	seq  int
	buf  []byte
	n    int64
}

func newFileWriter(ctx context.Context, tx bun.IDB, id uuid.UUID, slot string) (*fileWriter, error) {
	// A batch run again after a failure starts the file afresh.
	if _, err := tx.NewDelete().Table("task_files").Where("task_id = ? AND slot = ?", id, slot).Exec(ctx); err != nil {
		return nil, fmt.Errorf("clear task file: %w", err)
	}
	return &fileWriter{ctx: ctx, tx: tx, task: id, slot: slot, buf: make([]byte, 0, resultChunk)}, nil
}

func (w *fileWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		room := resultChunk - len(w.buf)
		take := min(room, len(p))
		w.buf = append(w.buf, p[:take]...)
		p = p[take:]
		if len(w.buf) == resultChunk {
			if err := w.flush(); err != nil {
				return 0, err
			}
		}
	}
	w.n += int64(n)
	return n, nil
}

func (w *fileWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.tx.NewRaw("INSERT INTO task_files (task_id, slot, seq, data) VALUES (?, ?, ?, ?)", w.task, w.slot, w.seq, w.buf).Exec(w.ctx); err != nil {
		return fmt.Errorf("write task file: %w", err)
	}
	w.seq++
	w.buf = w.buf[:0]
	return nil
}

// Close writes the last chunk.
func (w *fileWriter) Close() error { return w.flush() }

// Result is a finished task's result to stream: its name, type and chunks.
type Result struct {
	Name, Type string
	file       *file
}

// Size is the result's length in bytes.
func (r *Result) Size() int64 { return r.file.size }

// OpenResult is the result of task id as v may read it: ErrNotFound as Get, ErrNoResult
// when the task has none (not an export, or not SUCCEEDED).
func OpenResult(ctx context.Context, db bun.IDB, id uuid.UUID, v Viewer) (*Result, error) {
	t, err := Get(ctx, db, id, v)
	if err != nil {
		return nil, err
	}
	if t.State != StateSucceeded || t.ResultKey == nil {
		return nil, ErrNoResult
	}
	f, err := openFile(ctx, db, id, slotResult)
	if err != nil {
		return nil, err
	}
	return &Result{Name: deref(t.ResultName), Type: deref(t.ResultType), file: f}, nil
}

// file is a stored task file: its chunks are read one statement each.
type file struct {
	db     bun.IDB
	task   uuid.UUID
	slot   string
	chunks int
	size   int64
	// cached is the chunk read last (ReadAt reads neighbouring bytes many times).
	cachedSeq int
	cached    []byte
}

func openFile(ctx context.Context, db bun.IDB, id uuid.UUID, slot string) (*file, error) {
	f := &file{db: db, task: id, slot: slot, cachedSeq: -1}
	err := db.NewSelect().Table("task_files").ColumnExpr("count(*), coalesce(sum(length(data)), 0)").
		Where("task_id = ? AND slot = ?", id, slot).Scan(ctx, &f.chunks, &f.size)
	if err != nil {
		return nil, fmt.Errorf("read task file: %w", err)
	}
	return f, nil
}

func (f *file) chunk(ctx context.Context, seq int) ([]byte, error) {
	if seq == f.cachedSeq {
		return f.cached, nil
	}
	var data []byte
	if err := f.db.NewSelect().Table("task_files").Column("data").Where("task_id = ? AND slot = ? AND seq = ?", f.task, f.slot, seq).
		Scan(ctx, &data); err != nil {
		return nil, fmt.Errorf("read task file chunk %d: %w", seq, err)
	}
	f.cachedSeq, f.cached = seq, data
	return data, nil
}

// readerAt reads f at any offset (a zip's directory is at its end).
type readerAt struct {
	ctx context.Context
	f   *file
}

func (r readerAt) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		if off >= r.f.size {
			return n, io.EOF
		}
		data, err := r.f.chunk(r.ctx, int(off/resultChunk))
		if err != nil {
			return n, err
		}
		c := copy(p[n:], data[off%resultChunk:])
		n += c
		off += int64(c)
	}
	return n, nil
}

// WriteTo streams the chunks to w, one statement (and one chunk of memory) each. The
// chunks of a finished task never change, so no transaction holds them together.
func (r *Result) WriteTo(ctx context.Context, w io.Writer) error {
	for seq := 0; seq < r.file.chunks; seq++ {
		data, err := r.file.chunk(ctx, seq)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
