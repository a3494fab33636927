package realtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/realtime"
	"github.com/taskweave/taskweave/domain/sprint"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestBoardMessages(t *testing.T) {
	t.Parallel()
	const key = "ABCDEFGHIJ" // the longest project key
	issueID, statusID, sprintID := uuid.New(), uuid.New(), uuid.New()
	moved := issue.StatusChanged{Subject: issue.Subject{ProjectKey: key, IssueID: issueID, Title: strings.Repeat("t", 500)}, NewStatusID: statusID}
	started := sprint.Started{Subject: sprint.Subject{ProjectKey: key, SprintID: sprintID, SprintName: strings.Repeat("s", 500)}}
	completed := sprint.Completed{Subject: started.Subject}
	for _, tc := range []struct {
		ev   any
		want map[string]any
	}{
		{moved, map[string]any{"type": "ISSUE_MOVED", "issueId": issueID.String(), "newStatusId": statusID.String(), "projectKey": key}},
		{&moved, map[string]any{"type": "ISSUE_MOVED", "issueId": issueID.String(), "newStatusId": statusID.String(), "projectKey": key}},
		{started, map[string]any{"type": "SPRINT_UPDATED", "sprintId": sprintID.String(), "projectKey": key}},
		{completed, map[string]any{"type": "SPRINT_UPDATED", "sprintId": sprintID.String(), "projectKey": key}},
	} {
		m, ok, err := realtime.BoardMessage(tc.ev.(interface{ EventName() string }))
		require.NoError(t, err)
		require.True(t, ok, "%T", tc.ev)
		require.Equal(t, "/topic/projects/"+key, m.Destination)
		var body map[string]any
		require.NoError(t, json.Unmarshal(m.Body, &body))
		require.Equal(t, tc.want, body, "%T", tc.ev)
		// Titles and names stay out: the payload is far below the NOTIFY limit.
		payload, err := json.Marshal(m)
		require.NoError(t, err)
		require.Less(t, len(payload), 300, "%s", payload)
	}
	_, ok, err := realtime.BoardMessage(issue.Created{})
	require.NoError(t, err)
	require.False(t, ok)
}

// listen runs a listener on db until the test ends and returns what it receives.
func listen(t *testing.T, db *store.DB) (*realtime.Listener, <-chan realtime.Message) {
	t.Helper()
	got := make(chan realtime.Message, 16)
	l := realtime.NewListener(db.Pool.Config().ConnConfig, slog.New(slog.NewTextHandler(io.Discard, nil)), func(m realtime.Message) { got <- m })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	require.NoError(t, l.WaitReady(wctx))
	return l, got
}

func receive(t *testing.T, got <-chan realtime.Message) realtime.Message {
	t.Helper()
	select {
	case m := <-got:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message within 10 s")
		return realtime.Message{}
	}
}

func TestPublishDeliversOnlyCommitted(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	_, got := listen(t, db)
	ctx := context.Background()
	msg := func(n int) realtime.Message {
		return realtime.Message{Destination: realtime.ProjectTopic("RT"), Body: json.RawMessage(`{"n":` + string(rune('0'+n)) + `}`)}
	}
	boom := errors.New("roll back")
	require.ErrorIs(t, store.InTx(ctx, db.Bun, func(ctx context.Context, tx bun.Tx) error {
		require.NoError(t, realtime.Publish(ctx, tx, msg(1)))
		return boom
	}), boom)
	user := uuid.New()
	require.NoError(t, store.InTx(ctx, db.Bun, func(ctx context.Context, tx bun.Tx) error {
		return realtime.Publish(ctx, tx, msg(2), realtime.Message{Destination: realtime.UserDestination(user, realtime.NotificationQueue), Body: json.RawMessage(`{}`)})
	}))
	// Delivery follows commit order: the rolled-back message would have come first.
	require.JSONEq(t, `{"n":2}`, string(receive(t, got).Body))
	m := receive(t, got)
	require.Equal(t, "/user/"+user.String()+"/queue/notifications", m.Destination)
	require.True(t, realtime.IsUserDestination(m.Destination))

	big := realtime.Message{Destination: realtime.ProjectTopic("RT"), Body: json.RawMessage(`"` + strings.Repeat("x", realtime.MaxPayload) + `"`)}
	require.ErrorIs(t, realtime.Publish(ctx, db.Bun, big), realtime.ErrPayloadTooLarge)
}

func TestListenerReconnects(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	l, got := listen(t, db)
	ctx := context.Background()

	// Kill the listening backend; the listener comes back and LISTENs again.
	var killed bool
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN%'`).Scan(&killed))
	require.True(t, killed)
	deadline := time.Now().Add(15 * time.Second)
	for {
		// Publish until one arrives: messages sent while it reconnects are lost, which
		// is the documented behaviour.
		require.NoError(t, realtime.Publish(ctx, db.Bun, realtime.Message{Destination: "/topic/projects/RT", Body: json.RawMessage(`{"after":"kill"}`)}))
		select {
		case m := <-got:
			require.JSONEq(t, `{"after":"kill"}`, string(m.Body))
			wctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			require.NoError(t, l.WaitReady(wctx))
			return
		case <-time.After(50 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "the listener did not come back")
	}
}
