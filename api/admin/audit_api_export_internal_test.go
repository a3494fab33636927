package admin

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestAuditExportEndsAtItsDeadlineWhenTheClientStalls: a reader that never reads blocks
// the pipe write, where no context reaches; the export still ends at its deadline,
// gives its database connection back and fails the body instead of ending it cleanly.
func TestAuditExportEndsAtItsDeadlineWhenTheClientStalls(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	_, err := db.Pool.Exec(context.Background(), `INSERT INTO audit_events (id, user_email, action, level)
		SELECT gen_random_uuid(), 'system', 'ISSUE_CREATED', 'WRITE' FROM generate_series(1, 10)`)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	cur, err := audit.OpenCursor(ctx, db.Pool, audit.Filter{})
	require.NoError(t, err)
	require.Equal(t, int32(1), db.Pool.Stat().AcquiredConns(), "the export holds a connection")

	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		streamAuditExport(ctx, cancel, cur, "json", pw, slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the export did not end at its deadline")
	}
	require.Equal(t, int32(0), db.Pool.Stat().AcquiredConns(), "the connection is back in the pool")
	_, err = io.ReadAll(pr)
	require.Error(t, err, "the body fails rather than ending as if complete")
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
}

// TestAuditExportEndsCleanly: a reader that reads everything gets the whole array and
// a normal end.
func TestAuditExportEndsCleanly(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	_, err := db.Pool.Exec(context.Background(), `INSERT INTO audit_events (id, user_email, action, level)
		SELECT gen_random_uuid(), 'system', 'ISSUE_CREATED', 'WRITE' FROM generate_series(1, 3)`)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	cur, err := audit.OpenCursor(ctx, db.Pool, audit.Filter{})
	require.NoError(t, err)
	pr, pw := io.Pipe()
	go streamAuditExport(ctx, cancel, cur, "csv", pw, slog.New(slog.NewTextHandler(io.Discard, nil)))
	body, err := io.ReadAll(pr)
	require.NoError(t, err)
	require.Len(t, strings.Split(strings.TrimSuffix(string(body), "\n"), "\n"), 4, "header and three rows")
	require.Eventually(t, func() bool { return db.Pool.Stat().AcquiredConns() == 0 }, 5*time.Second, 10*time.Millisecond)
}
