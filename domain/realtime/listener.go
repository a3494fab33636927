package realtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listener holds one dedicated connection LISTENing on Channel and hands every message
// to a handler. It reconnects with backoff; messages committed while it is disconnected
// are lost (NOTIFY is not a queue), which is acceptable for a board that reloads anyway.
type Listener struct {
	connConfig *pgx.ConnConfig
	log        *slog.Logger
	handle     func(Message)

	mu    sync.Mutex
	ready chan struct{} // closed while LISTEN is active; replaced on disconnect
	live  bool
	// reachedLive is set when a connection reaches LISTEN; Run reads and clears it.
	reachedLive bool
	// reconnected runs each time LISTEN is active again after a disconnect.
	reconnected func()
	listened    bool
}

// Listener tuning: how long a quiet connection waits before it checks it is still alive,
// and the reconnect backoff bounds.
const (
	idleCheck  = 30 * time.Second
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// NewListener prepares a listener on the database of connConfig (copied; the pool's
// configuration gives a connection outside the pool's limit). handle runs on the
// listener's goroutine and must not block.
func NewListener(connConfig *pgx.ConnConfig, log *slog.Logger, handle func(Message)) *Listener {
	return &Listener{connConfig: connConfig.Copy(), log: log, handle: handle, ready: make(chan struct{})}
}

// OnReconnect sets f to run (on the listener's goroutine; it must not block) each time
// LISTEN is active again after a disconnect, when whatever committed in between was
// missed: the STOMP hub then checks every session's access again. Call it before Run.
func (l *Listener) OnReconnect(f func()) { l.reconnected = f }

// Run listens until ctx ends, reconnecting after any failure: at once after a
// connection that had been up, then with backoff while connecting keeps failing.
func (l *Listener) Run(ctx context.Context) {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		started := time.Now()
		err := l.listen(ctx)
		l.setLive(false)
		if ctx.Err() != nil {
			return
		}
		if l.wasLive() {
			backoff = 0
		}
		l.log.Warn("realtime listener disconnected", "err", err, "retry_in", backoff, "connected_for", time.Since(started).Round(time.Millisecond).String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(max(backoff*2, minBackoff), maxBackoff)
	}
}

// wasLive reports (and forgets) whether the last connection got as far as LISTEN.
func (l *Listener) wasLive() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	was := l.reachedLive
	l.reachedLive = false
	return was
}

// WaitReady blocks until LISTEN is active or ctx ends, so a subscriber that has been
// told it is subscribed really receives what commits afterwards.
func (l *Listener) WaitReady(ctx context.Context) error {
	l.mu.Lock()
	ready := l.ready
	l.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("realtime listener not ready: %w", ctx.Err())
	}
}

func (l *Listener) setLive(live bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if live == l.live {
		return
	}
	l.live = live
	if live {
		l.reachedLive = true
		close(l.ready)
	} else {
		l.ready = make(chan struct{})
	}
}

// listen runs one connection's life: connect, LISTEN, deliver until an error.
func (l *Listener) listen(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgx.ConnectConfig(cctx, l.connConfig)
	cancel()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{Channel}.Sanitize()); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	l.setLive(true)
	if l.listened && l.reconnected != nil {
		l.reconnected()
	}
	l.listened = true
	for {
		wctx, cancel := context.WithTimeout(ctx, idleCheck)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			m, derr := Decode(n.Payload)
			if derr != nil {
				l.log.Error("realtime: dropping a malformed notification", "err", derr)
				continue
			}
			l.handle(m)
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			// Quiet for a while: a dead peer without a reset would leave us waiting
			// forever, so prove the connection still answers.
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return fmt.Errorf("ping: %w", err)
			}
		default:
			return fmt.Errorf("wait: %w", err)
		}
	}
}
