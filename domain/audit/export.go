package audit

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/taskweave/taskweave/store"
)

// Cursor walks every event of a filter, newest first, without holding them in memory:
// rows come off the connection as Next asks for them. It runs in its own read-only
// REPEATABLE READ transaction, so the whole walk sees one snapshot however long the
// reader takes, and it holds one pool connection until Close.
type Cursor struct {
	tx      pgx.Tx
	rows    pgx.Rows
	ev      store.AuditEvent
	peeked  bool // the first row was read by OpenCursor and not yet handed out
	started bool
	err     error
}

// OpenCursor starts the walk and reads the first row, so a failing query (or an
// unreachable database) is reported here, before a caller has promised a reply. ctx
// bounds the whole walk, not just the opening: pass one that lives as long as the reader.
func OpenCursor(ctx context.Context, pool *pgxpool.Pool, f Filter) (*Cursor, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("export audit events: begin: %w", err)
	}
	// An export streams for as long as its own deadline allows (ctx), longer than the API
	// pool's statement timeout, which applies to request statements.
	if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("export audit events: %w", err)
	}
	q, args := f.exportQuery()
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("export audit events: %w", err)
	}
	c := &Cursor{tx: tx, rows: rows}
	c.peeked = c.read()
	if c.err != nil {
		err := c.err
		_ = c.Close(ctx)
		return nil, err
	}
	return c, nil
}

// read advances the rows into c.ev; false at the end or on an error (kept in c.err).
func (c *Cursor) read() bool {
	if !c.rows.Next() {
		if err := c.rows.Err(); err != nil {
			c.err = fmt.Errorf("export audit events: %w", err)
		}
		return false
	}
	if err := scanEvent(c.rows, &c.ev); err != nil {
		c.err = err
		return false
	}
	return true
}

// Next moves to the next event; false at the end or on an error (see Err).
func (c *Cursor) Next() bool {
	if !c.started {
		c.started = true
		return c.peeked
	}
	if c.err != nil {
		return false
	}
	return c.read()
}

// Event is the current event; it is overwritten by the next call to Next.
func (c *Cursor) Event() *store.AuditEvent { return &c.ev }

// Err is the error that ended the walk early, nil at a normal end.
func (c *Cursor) Err() error { return c.err }

// Close ends the transaction and gives the connection back. It is safe to call more
// than once, and it works after ctx ended (the rollback does not use ctx's deadline).
func (c *Cursor) Close(ctx context.Context) error {
	if c.rows == nil {
		return nil
	}
	c.rows.Close()
	c.rows = nil
	err := c.tx.Rollback(context.WithoutCancel(ctx))
	if errors.Is(err, pgx.ErrTxClosed) {
		return nil
	}
	return err
}
