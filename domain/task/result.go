package task

import (
	"context"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// resultChunk is the size of one task_results row.
const resultChunk = 1 << 20

// resultWriter writes a task's result into task_results on tx, a chunk at a time, so a
// result of any size costs one chunk of memory.
type resultWriter struct {
	ctx  context.Context
	tx   bun.IDB
	task uuid.UUID
	seq  int
	buf  []byte
	n    int64
}

func newResultWriter(ctx context.Context, tx bun.IDB, id uuid.UUID) (*resultWriter, error) {
	// A batch run again after a failure starts the result afresh.
	if _, err := tx.NewDelete().Table("task_results").Where("task_id = ?", id).Exec(ctx); err != nil {
		return nil, fmt.Errorf("clear task result: %w", err)
	}
	return &resultWriter{ctx: ctx, tx: tx, task: id, buf: make([]byte, 0, resultChunk)}, nil
}

func (w *resultWriter) Write(p []byte) (int, error) {
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

func (w *resultWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.tx.NewRaw("INSERT INTO task_results (task_id, seq, data) VALUES (?, ?, ?)", w.task, w.seq, w.buf).Exec(w.ctx); err != nil {
		return fmt.Errorf("write task result: %w", err)
	}
	w.seq++
	w.buf = w.buf[:0]
	return nil
}

// Close writes the last chunk.
func (w *resultWriter) Close() error { return w.flush() }

// Result is a finished task's result to stream: its name, type and chunks.
type Result struct {
	Name, Type string
	Size       int64
	db         bun.IDB
	task       uuid.UUID
	chunks     int
}

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
	r := &Result{Name: deref(t.ResultName), Type: deref(t.ResultType), db: db, task: id}
	err = db.NewSelect().Table("task_results").ColumnExpr("count(*), coalesce(sum(length(data)), 0)").
		Where("task_id = ?", id).Scan(ctx, &r.chunks, &r.Size)
	if err != nil {
		return nil, fmt.Errorf("read task result: %w", err)
	}
	return r, nil
}

// WriteTo streams the chunks to w, one statement (and one chunk of memory) each. The
// chunks of a finished task never change, so no transaction holds them together.
func (r *Result) WriteTo(ctx context.Context, w io.Writer) error {
	for seq := 0; seq < r.chunks; seq++ {
		var data []byte
		if err := r.db.NewSelect().Table("task_results").Column("data").Where("task_id = ? AND seq = ?", r.task, seq).
			Scan(ctx, &data); err != nil {
			return fmt.Errorf("read task result chunk %d: %w", seq, err)
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
