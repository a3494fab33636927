package attachment_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/attachment"
)

// localStorage is a Local on a fresh directory root inside base, so a test can keep a
// file next to the root that nothing may reach.
func localStorage(t *testing.T) (st *attachment.Local, root, base string) {
	t.Helper()
	base = t.TempDir()
	root = filepath.Join(base, "root")
	st, err := attachment.NewLocal(root) // creates the missing directory
	require.NoError(t, err)
	return st, root, base
}

func TestLocalPutOpenRemove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, root, _ := localStorage(t)
	name := attachment.NewStoredName("a.txt")
	n, err := st.Put(ctx, name, bytes.NewReader([]byte("hello")))
	require.NoError(t, err)
	require.EqualValues(t, 5, n)
	raw, err := os.ReadFile(filepath.Join(root, name))
	require.NoError(t, err)
	require.Equal(t, "hello", string(raw))

	_, err = st.Put(ctx, name, bytes.NewReader([]byte("again")))
	require.Error(t, err, "an existing name is never overwritten")
	raw, _ = os.ReadFile(filepath.Join(root, name))
	require.Equal(t, "hello", string(raw), "and the failed put did not remove the existing file")

	r, size, err := st.Open(ctx, name)
	require.NoError(t, err)
	require.EqualValues(t, 5, size)
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.Equal(t, "hello", string(got))

	require.NoError(t, st.Remove(ctx, name))
	require.NoFileExists(t, filepath.Join(root, name))
	require.ErrorIs(t, st.Remove(ctx, name), attachment.ErrFileNotFound)
	_, _, err = st.Open(ctx, name)
	require.ErrorIs(t, err, attachment.ErrFileNotFound)
}

// errAfter yields n bytes, then fails.
type errAfter struct{ n int }

var errBroken = errors.New("client went away")

func (e *errAfter) Read(p []byte) (int, error) {
	if e.n == 0 {
		return 0, errBroken
	}
	k := min(len(p), e.n)
	e.n -= k
	return k, nil
}

func TestLocalPutFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	st, root, _ := localStorage(t)
	name := attachment.NewStoredName("a.bin")
	_, err := st.Put(context.Background(), name, &errAfter{n: 100 << 10})
	require.ErrorIs(t, err, errBroken)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Empty(t, entries)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = st.Put(ctx, name, bytes.NewReader([]byte("x")))
	require.ErrorIs(t, err, context.Canceled)
	entries, _ = os.ReadDir(root)
	require.Empty(t, entries)
}

// TestLocalNothingOutsideTheRoot: names not of the generated form are not found, for
// every operation, and a file next to the root stays untouched; a symbolic link inside
// the root that points outside is never followed.
func TestLocalNothingOutsideTheRoot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, root, base := localStorage(t)
	victim := filepath.Join(base, "victim.txt")
	require.NoError(t, os.WriteFile(victim, []byte("secret"), 0o600))

	for _, name := range []string{"../victim.txt", "../../etc/passwd", "/etc/passwd", "sub/x", "..", "victim.txt"} {
		_, _, err := st.Open(ctx, name)
		require.ErrorIs(t, err, attachment.ErrFileNotFound, name)
		require.ErrorIs(t, st.Remove(ctx, name), attachment.ErrFileNotFound, name)
		_, err = st.Put(ctx, name, bytes.NewReader([]byte("overwritten")))
		require.ErrorIs(t, err, attachment.ErrFileNotFound, name)
	}
	raw, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "secret", string(raw))

	link := attachment.NewStoredName("x.txt")
	require.NoError(t, os.Symlink(victim, filepath.Join(root, link)))
	_, _, err = st.Open(ctx, link)
	require.ErrorIs(t, err, attachment.ErrFileNotFound, "a link is not followed")
	require.NoError(t, st.Remove(ctx, link), "removing it removes the link itself")
	require.NoFileExists(t, filepath.Join(root, link))
	raw, err = os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "secret", string(raw))
}

// TestLocalMissingRoot: a storage directory that vanished (an unmounted volume) is a
// storage failure, never "file not found", which deletes treat as already removed.
func TestLocalMissingRoot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, root, _ := localStorage(t)
	require.NoError(t, os.Remove(root))
	name := attachment.NewStoredName("a.txt")
	err := st.Remove(ctx, name)
	require.Error(t, err)
	require.NotErrorIs(t, err, attachment.ErrFileNotFound)
	_, _, err = st.Open(ctx, name)
	require.Error(t, err)
	require.NotErrorIs(t, err, attachment.ErrFileNotFound)
	_, err = st.Put(ctx, name, bytes.NewReader([]byte("x")))
	require.Error(t, err)
}

// TestLocalRemoveStalePartials: a partial file a crash left behind is removed once it is
// older than the limit; a fresh one (an upload in progress) and stored files stay.
func TestLocalRemoveStalePartials(t *testing.T) {
	t.Parallel()
	st, root, _ := localStorage(t)
	stored := attachment.NewStoredName("kept.txt")
	_, err := st.Put(context.Background(), stored, bytes.NewReader([]byte("whole")))
	require.NoError(t, err)
	stale, fresh := "."+attachment.NewStoredName("a.bin")+".part", "."+attachment.NewStoredName("b.bin")+".part"
	for _, name := range []string{stale, fresh} {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte("partial"), 0o640))
	}
	old := time.Now().Add(-2 * time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(root, stale), old, old))
	n, err := st.RemoveStalePartials(context.Background(), time.Hour)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.NoFileExists(t, filepath.Join(root, stale))
	require.FileExists(t, filepath.Join(root, fresh))
	require.FileExists(t, filepath.Join(root, stored))
}
