package attachment

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/store"
)

// MoveProgress is how far a move of the disk's files to the bucket got: Total rows
// were on the disk when it started, Done are in the bucket now, Failed stayed on the
// disk (a missing or unreadable file, a size or checksum that did not match). After is
// the last row handled, so a move that was stopped continues behind it.
type MoveProgress struct {
	Total  int         `json:"total"`
	Done   int         `json:"done"`
	Failed int         `json:"failed"`
	After  *MoveCursor `json:"after,omitempty"`
}

// MoveCursor is a row's place in the move's order (created_at, id).
type MoveCursor struct {
	CreatedAt time.Time `json:"createdAt"`
	ID        uuid.UUID `json:"id"`
}

// moveBatch is how many rows one query of the move reads.
const moveBatch = 20

// Move copies the files of rows on the disk to the bucket, in creation order behind
// p.After, until every row is handled (finished) or until passes (the caller continues
// later with the same p). Each file is streamed to the bucket while its SHA-256 is
// taken, read back and checked for size and SHA-256, and only then is its row switched
// to the bucket; the disk copy is queued for the sweep (after the deletion grace, as a
// deleted file is). report is called after each row with the progress. Running it
// again after it finished copies nothing: no row is on the disk any more, except the
// failed ones, which a new move tries again.
func (s *Service) Move(ctx context.Context, p *MoveProgress, until time.Time, report func(context.Context, MoveProgress) error) (finished bool, err error) {
	from, err := s.files.At(LocationDisk)
	if err != nil {
		return false, err
	}
	to, err := s.files.At(LocationS3)
	if err != nil {
		return false, err
	}
	if p.After == nil && p.Done == 0 && p.Failed == 0 {
		n, err := s.db.NewSelect().Model((*store.Attachment)(nil)).Where("storage = ?", LocationDisk).Count(ctx)
		if err != nil {
			return false, fmt.Errorf("count attachments on the disk: %w", err)
		}
		p.Total = int(n)
	}
	for time.Now().Before(until) {
		var rows []store.Attachment
		q := s.db.NewSelect().Model(&rows).Where("storage = ?", LocationDisk).Order("created_at", "id").Limit(moveBatch)
		if p.After != nil {
			q = q.Where("(created_at, id) > (?, ?)", p.After.CreatedAt, p.After.ID)
		}
		if err := q.Scan(ctx); err != nil {
			return false, fmt.Errorf("read attachments on the disk: %w", err)
		}
		if len(rows) == 0 {
			return true, nil
		}
		for i := range rows {
			a := &rows[i]
			if err := s.moveOne(ctx, from, to, a); err != nil {
				if ctx.Err() != nil {
					return false, err
				}
				s.log.WarnContext(ctx, "attachment not moved to the bucket", "attachmentId", a.ID, "err", err)
				p.Failed++
			} else {
				p.Done++
			}
			p.After = &MoveCursor{CreatedAt: a.CreatedAt, ID: a.ID}
			if err := report(ctx, *p); err != nil {
				return false, err
			}
			if !time.Now().Before(until) {
				break
			}
		}
	}
	return false, nil
}

// errMoveMismatch is a copy whose size or SHA-256 differs from the disk's.
var errMoveMismatch = errors.New("the copy in the bucket differs from the file on the disk")

// moveOne copies a's file and switches its row. The object is queued as an upload
// first, as Store does, so an object whose row never switches (the process stopped,
// the row was deleted meanwhile) is swept.
func (s *Service) moveOne(ctx context.Context, from, to Storage, a *store.Attachment) error {
	if _, err := s.db.NewRaw(`INSERT INTO attachment_orphans (stored_name, storage, upload) VALUES (?, ?, true)
		ON CONFLICT (stored_name, storage) DO UPDATE SET created_at = now(), upload = true`,
		a.StoredName, to.Location()).Exec(ctx); err != nil {
		return fmt.Errorf("queue the copy: %w", err)
	}
	r, _, err := from.Open(ctx, a.StoredName)
	if err != nil {
		return fmt.Errorf("open on the disk: %w", err)
	}
	sum := sha256.New()
	n, err := to.Put(ctx, a.StoredName, io.TeeReader(r, sum))
	_ = r.Close()
	if err != nil {
		return fmt.Errorf("copy to the bucket: %w", err)
	}
	want := sum.Sum(nil)
	if n != a.Size {
		s.discardCopy(ctx, to, a.StoredName)
		return fmt.Errorf("%w: %d bytes on the disk, %d in the row", errMoveMismatch, n, a.Size)
	}
	if err := verifyCopy(ctx, to, a.StoredName, n, want); err != nil {
		s.discardCopy(ctx, to, a.StoredName)
		return err
	}
	return store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*store.Attachment)(nil)).Set("storage = ?", to.Location()).
			Where("id = ? AND storage = ?", a.ID, from.Location()).Exec(ctx)
		if err != nil {
			return fmt.Errorf("switch the row: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // deleted meanwhile: the queued copy is swept
		}
		if _, err := tx.NewRaw(`DELETE FROM attachment_orphans WHERE stored_name = ? AND storage = ? AND upload`,
			a.StoredName, to.Location()).Exec(ctx); err != nil {
			return fmt.Errorf("unqueue the copy: %w", err)
		}
		// The disk copy goes after the deletion grace, so a backup of the directory
		// taken after an older database dump still has it.
		if _, err := tx.NewRaw(`INSERT INTO attachment_orphans (stored_name, storage) VALUES (?, ?) ON CONFLICT DO NOTHING`,
			a.StoredName, from.Location()).Exec(ctx); err != nil {
			return fmt.Errorf("queue the disk copy: %w", err)
		}
		return nil
	})
}

// verifyCopy reads the object back and compares its size and SHA-256.
func verifyCopy(ctx context.Context, to Storage, name string, size int64, want []byte) error {
	r, _, err := to.Open(ctx, name)
	if err != nil {
		return fmt.Errorf("read the copy back: %w", err)
	}
	defer r.Close()
	sum := sha256.New()
	n, err := io.Copy(sum, r)
	if err != nil {
		return fmt.Errorf("read the copy back: %w", err)
	}
	if n != size || !bytes.Equal(sum.Sum(nil), want) {
		return fmt.Errorf("%w: %d bytes read back of %d, or another SHA-256", errMoveMismatch, n, size)
	}
	return nil
}

// discardCopy removes a copy that failed its check; one that cannot be removed is left
// to the sweep (it is queued).
func (s *Service) discardCopy(ctx context.Context, to Storage, name string) {
	if err := to.Remove(ctx, name); err != nil {
		s.log.WarnContext(ctx, "failed copy left for the sweep", "storedName", name, "err", err)
	}
}
