package attachment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
)

// Storage keeps attachment files by stored name. The local disk (Local) and an
// S3-compatible bucket (S3, for deployments with more than one API machine, which
// cannot share a local directory) implement it. Names are always of the generated form
// (ValidStoredName); an implementation refuses any other name as ErrFileNotFound, so a
// tampered record cannot reach another file.
type Storage interface {
	// Location names the storage in the attachment rows (attachments.storage), so each
	// row is read from where its file lives.
	Location() Location
	// Put writes the whole of r under name, which must not exist yet, and returns the
	// number of bytes written. Once Put returns nil the file is durable. On any error
	// (including one returned by r) nothing remains under name.
	Put(ctx context.Context, name string, r io.Reader) (int64, error)
	// Open returns the file's content and size. The reader is read after the request
	// handler returns (the response is streamed), so it must not depend on ctx staying
	// alive; the caller closes it. A missing file is ErrFileNotFound.
	Open(ctx context.Context, name string) (io.ReadCloser, int64, error)
	// OpenRange is Open for the n bytes from offset off, which the caller has checked
	// against the file's size.
	OpenRange(ctx context.Context, name string, off, n int64) (io.ReadCloser, error)
	// Remove deletes the file. A missing file is ErrFileNotFound, which callers treat
	// as already removed.
	Remove(ctx context.Context, name string) error
}

// ErrFileNotFound is a stored name without a file, or a name not of the generated form.
var ErrFileNotFound = errors.New("attachment: file not found in storage")

// Local is Storage on a directory of the local disk. Every access goes through an
// os.Root, so neither `..` nor a symbolic link can lead outside the directory, and names
// are checked against the generated form before that. The root is opened per operation
// (two system calls): nothing is held open between requests, and a directory that was
// replaced (a remounted volume) is picked up.
type Local struct {
	dir string
}

// NewLocal uses the directory dir (created when missing) as a Local storage.
func NewLocal(dir string) (*Local, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("attachment storage %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("attachment storage %s: %w", dir, err)
	}
	_ = root.Close()
	return &Local{dir: dir}, nil
}

// errRoot is a storage directory that cannot be opened. It is never ErrFileNotFound:
// an unmounted volume must not make deletes count their files as already gone.
var errRoot = errors.New("attachment storage directory unavailable")

// Location implements Storage.
func (l *Local) Location() Location { return LocationDisk }

// with runs fn on the opened root.
func (l *Local) with(fn func(root *os.Root) error) error {
	root, err := os.OpenRoot(l.dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errRoot, l.dir, err)
	}
	defer root.Close()
	return fn(root)
}

// Put implements Storage: the file is created exclusively, written in 32 KiB steps (never
// whole in memory), synced and closed; on failure it is removed again.
func (l *Local) Put(ctx context.Context, name string, r io.Reader) (n int64, err error) {
	if !ValidStoredName(name) {
		return 0, fmt.Errorf("put %q: %w", name, ErrFileNotFound)
	}
	err = l.with(func(root *os.Root) error {
		n, err = put(ctx, root, name, r)
		return err
	})
	return n, err
}

// partialSuffix marks a file still being written. Its name (".<stored name>.part") is
// never of the generated form, so it is never served, and it becomes the stored name
// only once it is whole.
const partialSuffix = ".part"

func partialName(name string) string { return "." + name + partialSuffix }

// put writes the file in root under a partial name and links it to name once it is
// whole and synced, so a process stopped mid-write (a shutdown's grace running out, a
// crash) never leaves a partial file under a stored name. On failure the partial file
// is removed; one left by a crash is removed by RemoveStalePartials.
func put(ctx context.Context, root *os.Root, name string, r io.Reader) (n int64, err error) {
	tmp := partialName(name)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", tmp, err)
	}
	defer func() {
		if f != nil {
			_ = f.Close()
		}
		_ = root.Remove(tmp)
	}()
	// io.Copy would hand the file to r's WriteTo or the file's ReadFrom; a plain
	// buffer keeps the reads small and lets a cancelled ctx stop the copy.
	n, err = io.CopyBuffer(onlyWriter{f}, ctxReader{ctx, r}, make([]byte, 32<<10))
	if err != nil {
		return n, err
	}
	if err = f.Sync(); err != nil {
		return n, fmt.Errorf("sync %s: %w", tmp, err)
	}
	err, f = f.Close(), nil
	if err != nil {
		return n, fmt.Errorf("close %s: %w", tmp, err)
	}
	// A link, not a rename: it fails if name exists, as the exclusive create did.
	if err = root.Link(tmp, name); err != nil {
		return n, fmt.Errorf("link %s: %w", name, err)
	}
	if err = syncDir(root); err != nil {
		_ = root.Remove(name)
		return n, err
	}
	return n, nil
}

// syncDir makes the directory's new entry durable.
func syncDir(root *os.Root) error {
	d, err := root.Open(".")
	if err != nil {
		return fmt.Errorf("open storage directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync storage directory: %w", err)
	}
	return nil
}

// RemoveStalePartials removes partial files (see put) last written more than olderThan
// ago: what a crashed process left. A live upload writes its partial file continuously,
// so olderThan well above the body idle timeout never removes one.
func (l *Local) RemoveStalePartials(_ context.Context, olderThan time.Duration) (removed int, err error) {
	err = l.with(func(root *os.Root) error {
		d, err := root.Open(".")
		if err != nil {
			return err
		}
		defer d.Close()
		for {
			entries, err := d.ReadDir(256)
			for _, e := range entries {
				name := e.Name()
				if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, partialSuffix) || !e.Type().IsRegular() {
					continue
				}
				info, ierr := e.Info()
				if ierr != nil || time.Since(info.ModTime()) < olderThan {
					continue
				}
				if root.Remove(name) == nil {
					removed++
				}
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	return removed, err
}

// Open implements Storage.
func (l *Local) Open(_ context.Context, name string) (io.ReadCloser, int64, error) {
	if !ValidStoredName(name) {
		return nil, 0, fmt.Errorf("open %q: %w", name, ErrFileNotFound)
	}
	// Only regular files are served; a symbolic link (Taskweave never makes one) is not
	// found rather than a failure, wherever it points. The root would refuse to follow
	// one out of it anyway. The file stays readable after the root is closed again.
	var f *os.File
	err := l.with(func(root *os.Root) (err error) {
		st, err := root.Lstat(name)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("not a regular file: %w", fs.ErrNotExist)
		}
		f, err = root.Open(name)
		return err
	})
	if err != nil {
		return nil, 0, notFound(name, err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, fmt.Errorf("stat %s: %w", name, err)
	}
	if !st.Mode().IsRegular() {
		_ = f.Close()
		return nil, 0, fmt.Errorf("open %s: not a regular file: %w", name, ErrFileNotFound)
	}
	return f, st.Size(), nil
}

// OpenRange implements Storage.
func (l *Local) OpenRange(ctx context.Context, name string, off, n int64) (io.ReadCloser, error) {
	r, _, err := l.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	f := r.(*os.File)
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("seek %s: %w", name, err)
	}
	return limitedReadCloser{io.LimitReader(f, n), f}, nil
}

// limitedReadCloser reads a part of a file and closes the file.
type limitedReadCloser struct {
	io.Reader
	io.Closer
}

// Remove implements Storage.
func (l *Local) Remove(_ context.Context, name string) error {
	if !ValidStoredName(name) {
		return fmt.Errorf("remove %q: %w", name, ErrFileNotFound)
	}
	if err := l.with(func(root *os.Root) error { return root.Remove(name) }); err != nil {
		return notFound(name, err)
	}
	return nil
}

// notFound maps a missing file to ErrFileNotFound and wraps anything else.
func notFound(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errRoot) {
		return fmt.Errorf("%s: %w", name, ErrFileNotFound)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// ctxReader stops a copy once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// onlyWriter hides everything but Write, so io.CopyBuffer uses its buffer.
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(p []byte) (int, error) { return o.w.Write(p) }
