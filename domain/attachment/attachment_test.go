package attachment_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// fixture is a committed project with one issue, a service over a Local storage and a
// bus without River (its consumers are the test's; none of them returns jobs).
type fixture struct {
	ctx   context.Context
	db    bun.IDB
	svc   *attachment.Service
	bus   *event.Bus
	root  string
	p     issue.Project
	actor issue.Actor
	ref   issue.Ref
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db := storetest.PackageDB(t)
	f := &fixture{ctx: ctx, db: db.Bun, bus: event.NewBus(nil)}
	st, root, _ := localStorage(t)
	f.root = root
	f.svc = attachment.NewService(db, f.bus, attachment.NewStores(st), slog.New(slog.NewTextHandler(io.Discard, nil)))
	tag := strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:8])
	f.actor = f.user(t)
	f.p.Key = "A" + tag
	require.NoError(t, db.Bun.NewRaw("INSERT INTO projects (key, name, owner_id) VALUES (?, ?, ?) RETURNING id",
		f.p.Key, "Project "+tag, f.actor.UserID).Scan(ctx, &f.p.ID))
	wf, err := workflow.CreateDefault(ctx, db.Bun, f.p.ID)
	require.NoError(t, err)
	var status uuid.UUID
	require.NoError(t, db.Bun.NewRaw("SELECT id FROM workflow_statuses WHERE workflow_id = ? ORDER BY position LIMIT 1", wf.ID).Scan(ctx, &status))
	require.NoError(t, db.Bun.NewRaw(`
		WITH n AS (UPDATE projects SET issue_seq = issue_seq + 1 WHERE id = ? RETURNING key, issue_seq)
		INSERT INTO issues (project_id, number, key, title, status_id, reporter_id)
		SELECT ?, n.issue_seq, n.key || '-' || n.issue_seq, 'An issue', ?, ? FROM n RETURNING id`,
		f.p.ID, f.p.ID, status, f.actor.UserID).Scan(ctx, &f.ref.ID))
	return f
}

// user inserts a user and returns it as an actor.
func (f *fixture) user(t *testing.T) issue.Actor {
	t.Helper()
	a := issue.Actor{Actor: audit.Actor{Email: "at-" + uuid.NewString() + "@example.com"}}
	require.NoError(t, f.db.NewRaw("INSERT INTO users (email, display_name) VALUES (?, 'U') RETURNING id", a.Email).Scan(f.ctx, &a.UserID))
	return a
}

func (f *fixture) files(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(f.root)
	require.NoError(t, err)
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func (f *fixture) rows(t *testing.T) int {
	t.Helper()
	n, err := f.db.NewSelect().Table("attachments").Where("issue_id = ?", f.ref.ID).Count(f.ctx)
	require.NoError(t, err)
	return int(n)
}

func TestStoreLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.svc.Store(f.ctx, "big.bin", bytes.NewReader(make([]byte, 11)), 10)
	require.ErrorIs(t, err, attachment.ErrTooLarge)
	require.Empty(t, f.files(t))

	st, err := f.svc.Store(f.ctx, "fits.bin", bytes.NewReader(make([]byte, 10)), 10)
	require.NoError(t, err)
	require.EqualValues(t, 10, st.Size)
	require.Equal(t, []string{st.Name}, f.files(t))
	require.True(t, strings.HasSuffix(st.Name, ".bin"))

	_, err = f.svc.Store(f.ctx, "cut.bin", &errAfter{n: 5}, 10)
	require.ErrorIs(t, err, attachment.ErrContent, "a failing upload is the client's fault, not the storage's")
	require.NotErrorIs(t, err, attachment.ErrStorage)
	require.Equal(t, []string{st.Name}, f.files(t))
}

// TestRecordFailureRemovesFile: when the record's transaction fails (here a consumer of
// the Added event fails, or the issue is gone), no row stays and the stored file is
// removed again.
func TestRecordFailureRemovesFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	fail := errors.New("consumer failed")
	f.bus.Register(func(context.Context, bun.Tx, event.Event) ([]river.InsertManyParams, error) { return nil, fail }, attachment.EventAdded)

	st, err := f.svc.Store(f.ctx, "a.txt", strings.NewReader("data"), 100)
	require.NoError(t, err)
	require.Len(t, f.files(t), 1)
	_, err = f.svc.Record(f.ctx, f.p, f.actor, f.ref, st, attachment.File{Filename: "a.txt", ContentType: "text/plain"})
	require.ErrorIs(t, err, fail)
	require.Empty(t, f.files(t))
	require.Zero(t, f.rows(t))
	acts, err := f.db.NewSelect().Table("issue_activities").Where("issue_id = ?", f.ref.ID).Count(f.ctx)
	require.NoError(t, err)
	require.Zero(t, acts)

	st, err = f.svc.Store(f.ctx, "b.txt", strings.NewReader("data"), 100)
	require.NoError(t, err)
	_, err = f.svc.Record(f.ctx, f.p, f.actor, issue.Ref{ID: uuid.New()}, st, attachment.File{Filename: "b.txt", ContentType: "text/plain"})
	require.ErrorIs(t, err, issue.ErrNotFound)
	require.Empty(t, f.files(t))
}

func TestRecordAndDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var events []event.Event
	f.bus.Register(func(_ context.Context, _ bun.Tx, ev event.Event) ([]river.InsertManyParams, error) {
		events = append(events, ev)
		return nil, nil
	}, attachment.EventAdded, attachment.EventRemoved)

	st, err := f.svc.Store(f.ctx, "a.txt", strings.NewReader("data"), 100)
	require.NoError(t, err)
	a, err := f.svc.Record(f.ctx, f.p, f.actor, f.ref, st, attachment.File{Filename: "a.txt", ContentType: "text/plain"})
	require.NoError(t, err)
	require.Equal(t, st.Name, a.StoredName)
	require.False(t, a.CreatedAt.IsZero())
	require.Len(t, events, 1)
	added := events[0].(attachment.Added)
	require.Equal(t, a.ID, added.AttachmentID)
	require.Equal(t, f.ref.ID, added.IssueID)
	require.Equal(t, f.p.Key+"-1", added.IssueKey)
	require.Equal(t, f.actor.UserID, *added.By.ID)
	require.EqualValues(t, 4, added.Size)

	other := f.user(t)
	require.ErrorIs(t, f.svc.Delete(f.ctx, f.p, other, false, f.ref, a.ID), attachment.ErrNotUploader)
	require.ErrorIs(t, f.svc.Delete(f.ctx, f.p, f.actor, false, f.ref, uuid.New()), attachment.ErrNotFound)
	require.Equal(t, 1, f.rows(t))
	require.NoError(t, f.svc.Delete(f.ctx, f.p, other, true, f.ref, a.ID), "a project admin may")
	require.Zero(t, f.rows(t))
	require.Equal(t, []string{st.Name}, f.files(t), "the file waits for the sweep after the deletion grace")
	n, err := f.svc.Sweep(f.ctx, time.Hour)
	require.NoError(t, err)
	require.Zero(t, n, "not within the grace")
	n, err = f.svc.Sweep(f.ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Empty(t, f.files(t))
	require.Len(t, events, 2)
	removed := events[1].(attachment.Removed)
	require.Equal(t, a.ID, removed.AttachmentID)
	require.Equal(t, "a.txt", removed.Filename)
	require.ErrorIs(t, f.svc.Delete(f.ctx, f.p, f.actor, false, f.ref, a.ID), attachment.ErrNotFound)
}
