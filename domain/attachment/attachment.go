package attachment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store"
)

// Errors of the attachment rules; api/ maps each to its status
// (docs/api-conventions.md#errors).
var (
	ErrNotFound = errors.New("attachment: not found")
	// ErrNotUploader is a delete by someone who neither uploaded the file nor
	// administers the project.
	ErrNotUploader = errors.New("attachment: only the uploader or a project admin may delete it")
	// ErrTooLarge is an upload over the per-file limit; nothing of it is kept.
	ErrTooLarge = errors.New("attachment: file over the upload limit")
	// ErrContent wraps a failure reading the upload itself (the client went away, the
	// body was cut short or malformed): the client's fault, not the storage's.
	ErrContent = errors.New("attachment: reading the upload failed")
	// ErrStorage wraps a failure of the Storage other than a missing file (disk full,
	// permissions, an object store that does not answer).
	ErrStorage = errors.New("attachment: storage failed")
)

// Activity types written with the events.
const (
	ActivityAdded   = "ATTACHMENT_ADDED"
	ActivityRemoved = "ATTACHMENT_REMOVED"
)

// Service runs the attachment rules: files go to the Storage, records and their activity
// entries and events to the database, and the two are kept in step (a file without a
// committed record is removed again; a record stays while its file cannot be removed).
type Service struct {
	db    *bun.DB
	bus   *event.Bus
	files *Stores
	log   *slog.Logger
	now   func() time.Time
}

// NewService builds a Service; it holds no state of its own, so one per request is cheap.
func NewService(db *store.DB, bus *event.Bus, files *Stores, log *slog.Logger) *Service {
	return &Service{db: db.Bun, bus: bus, files: files, log: log, now: time.Now}
}

// Issue resolves the issue of the path inside the project; an unknown one (or one of
// another project) is issue.ErrNotFound.
func (s *Service) Issue(ctx context.Context, p issue.Project, ref issue.Ref) (issue.Subject, error) {
	return issue.LoadSubject(ctx, s.db, p, ref, false)
}

// Stored is a file written to the Storage that has no record yet.
type Stored struct {
	Name     string
	Size     int64
	Location Location
}

// Store streams content into a new file named after filename's extension, in the
// uploads storage. More than limit bytes is ErrTooLarge, and nothing remains of the file
// then (nor on any other error). The file has no record until Record commits one;
// Discard drops it. The file is queued as an orphan (an upload) before its first byte
// is written and unqueued by Record's transaction, so a file whose process died in
// between is swept (Sweep) rather than kept for ever.
func (s *Service) Store(ctx context.Context, filename string, content io.Reader, limit int64) (Stored, error) {
	files := s.files.Uploads()
	st := Stored{Name: NewStoredName(filename), Location: files.Location()}
	if _, err := s.db.NewRaw(`INSERT INTO attachment_orphans (stored_name, storage, upload) VALUES (?, ?, true)`,
		st.Name, st.Location).Exec(ctx); err != nil {
		return Stored{}, fmt.Errorf("queue upload %s: %w", st.Name, err)
	}
	cr := &capReader{r: content, left: limit}
	n, err := files.Put(ctx, st.Name, cr)
	if err != nil {
		s.Discard(ctx, st)
	}
	switch {
	case errors.Is(err, errOverCap):
		return Stored{}, ErrTooLarge
	case err != nil && cr.err != nil:
		return Stored{}, fmt.Errorf("%w: %w", ErrContent, cr.err)
	case err != nil:
		return Stored{}, storageError("store", err)
	}
	st.Size = n
	return st, nil
}

// Discard removes a stored file that will get no record, and unqueues it once it is
// gone. It runs after the request may have failed, so it does not use the request's
// context. A file it cannot remove stays queued for Sweep.
func (s *Service) Discard(ctx context.Context, st Stored) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	files, err := s.files.At(st.Location)
	if err == nil {
		err = files.Remove(ctx, st.Name)
	}
	if err != nil && !errors.Is(err, ErrFileNotFound) {
		s.log.ErrorContext(ctx, "attachment file left behind for the sweep", "storedName", st.Name, "err", err)
		return
	}
	if _, err := s.db.NewRaw(`DELETE FROM attachment_orphans WHERE stored_name = ? AND storage = ? AND upload`,
		st.Name, st.Location).Exec(ctx); err != nil {
		s.log.WarnContext(ctx, "discarded upload stays queued", "storedName", st.Name, "err", err)
	}
}

// errSwept is an upload whose queue entry was gone at commit: the sweep removed its
// file (an upload that outlived the sweep's minimum age), so no row may name it.
var errSwept = errors.New("the uploaded file was swept before its record committed")

// File is what the record says about an upload: the cleaned, checked filename and
// content type.
type File struct {
	Filename    string
	ContentType string
}

// Record commits the record of a stored file in one transaction with its
// ATTACHMENT_ADDED activity entry (newValue = filename) and the Added event's jobs. The
// issue is locked against deletion meanwhile; when it is gone (issue.ErrNotFound) or the
// transaction fails for any reason, the stored file is removed again.
func (s *Service) Record(ctx context.Context, p issue.Project, actor issue.Actor, ref issue.Ref, st Stored, f File) (*store.Attachment, error) {
	var a *store.Attachment
	err := store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var err error
		a, err = s.RecordIn(ctx, tx, p, actor, ref, st, f)
		return err
	})
	if err != nil {
		s.Discard(ctx, st)
		return nil, err
	}
	return a, nil
}

// RecordIn is Record inside the caller's transaction tx (an ingested e-mail records its
// ticket and its attachments together). On error the caller rolls back and Discards st;
// a rolled-back record leaves the file queued as an orphan, so it is swept if the caller
// cannot.
func (s *Service) RecordIn(ctx context.Context, tx bun.Tx, p issue.Project, actor issue.Actor, ref issue.Ref, st Stored, f File) (*store.Attachment, error) {
	a := &store.Attachment{ID: uuid.New(), UploaderID: actor.UserID, Filename: f.Filename, StoredName: st.Name,
		ContentType: f.ContentType, Size: st.Size, Storage: string(st.Location)}
	subj, err := issue.LoadSubject(ctx, tx, p, ref, true)
	if err != nil {
		return nil, err
	}
	res, err := tx.NewRaw(`DELETE FROM attachment_orphans WHERE stored_name = ? AND storage = ? AND upload`,
		st.Name, st.Location).Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("unqueue upload: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, storageError("record", errSwept)
	}
	a.IssueID = subj.IssueID
	if _, err := tx.NewInsert().Model(a).Returning("created_at, updated_at").Exec(ctx); err != nil {
		return nil, fmt.Errorf("insert attachment: %w", err)
	}
	act := store.IssueActivity{IssueID: subj.IssueID, ActorID: actor.UserID, Type: ActivityAdded, NewValue: &a.Filename}
	if _, err := tx.NewInsert().Model(&act).Exec(ctx); err != nil {
		return nil, fmt.Errorf("insert activity: %w", err)
	}
	if err := s.bus.Emit(ctx, tx, Added{Subject: subj, By: by(actor), AttachmentID: a.ID, Filename: a.Filename,
		ContentType: a.ContentType, Size: a.Size, At: a.CreatedAt.UTC()}); err != nil {
		return nil, err
	}
	return a, nil
}

// List returns the issue's attachments, oldest first, in one query.
func (s *Service) List(ctx context.Context, issueID uuid.UUID) ([]store.Attachment, error) {
	out := []store.Attachment{}
	if err := s.db.NewSelect().Model(&out).Where("issue_id = ?", issueID).Order("created_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list attachments: %w", err)
	}
	return out, nil
}

// Get returns an attachment of the issue; one of another issue is ErrNotFound.
func (s *Service) Get(ctx context.Context, issueID, id uuid.UUID) (*store.Attachment, error) {
	return load(ctx, s.db, issueID, id, false)
}

// Open returns the content of a's file and its size; the caller closes the reader. A
// record whose file is missing (or whose stored name is not of the generated form) is
// ErrFileNotFound.
func (s *Service) Open(ctx context.Context, a *store.Attachment) (io.ReadCloser, int64, error) {
	var r io.ReadCloser
	var size int64
	files, err := s.files.At(Location(a.Storage))
	if err == nil {
		r, size, err = files.Open(ctx, a.StoredName)
	}
	if err != nil {
		return nil, 0, s.openError(ctx, a, err)
	}
	return r, size, nil
}

// OpenRange returns the n bytes of a's file from offset off (checked against a.Size by
// the caller); the caller closes the reader.
func (s *Service) OpenRange(ctx context.Context, a *store.Attachment, off, n int64) (io.ReadCloser, error) {
	files, err := s.files.At(Location(a.Storage))
	if err != nil {
		return nil, s.openError(ctx, a, err)
	}
	r, err := files.OpenRange(ctx, a.StoredName, off, n)
	if err != nil {
		return nil, s.openError(ctx, a, err)
	}
	return r, nil
}

func (s *Service) openError(ctx context.Context, a *store.Attachment, err error) error {
	if errors.Is(err, ErrFileNotFound) {
		s.log.WarnContext(ctx, "attachment record without its file", "attachmentId", a.ID, "err", err)
		return ErrFileNotFound
	}
	return storageError("open", err)
}

// PresignedURL is an address of a's file valid for at most MaxPresignTTL that answers
// with contentType and disposition, when a's storage presigns (TW_S3_PRESIGN); ok is
// false otherwise (a row on the disk, presigning off), and the API streams the file.
func (s *Service) PresignedURL(ctx context.Context, a *store.Attachment, disposition string) (url string, ok bool, err error) {
	files, err := s.files.At(Location(a.Storage))
	if err != nil {
		return "", false, nil
	}
	p, isPresigner := files.(Presigner)
	if !isPresigner {
		return "", false, nil
	}
	url, ok, err = p.PresignGet(ctx, a.StoredName, MaxPresignTTL, a.ContentType, disposition)
	if err != nil {
		return "", false, storageError("presign", err)
	}
	return url, ok, nil
}

// Delete removes an attachment of the issue: its record, an ATTACHMENT_REMOVED activity
// entry (oldValue = filename) and the Removed event. Only the uploader or a project
// admin (admin) may. The file stays in storage, unreachable, until Sweep removes it after
// the deletion grace: a backup taken while deletes happen (the database dump first, the
// files after) then still has the file of every row the dump holds
// (docs/operations.md#backups). The row's deletion queues the file (migration 0017's
// trigger), in the same transaction.
func (s *Service) Delete(ctx context.Context, p issue.Project, actor issue.Actor, admin bool, ref issue.Ref, id uuid.UUID) error {
	return store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		subj, err := issue.LoadSubject(ctx, tx, p, ref, true)
		if err != nil {
			return err
		}
		a, err := load(ctx, tx, subj.IssueID, id, true)
		if err != nil {
			return err
		}
		if a.UploaderID != actor.UserID && !admin {
			return ErrNotUploader
		}
		if _, err := tx.NewDelete().Model((*store.Attachment)(nil)).Where("id = ?", a.ID).Exec(ctx); err != nil {
			return fmt.Errorf("delete attachment: %w", err)
		}
		act := store.IssueActivity{IssueID: subj.IssueID, ActorID: actor.UserID, Type: ActivityRemoved, OldValue: &a.Filename}
		if _, err := tx.NewInsert().Model(&act).Exec(ctx); err != nil {
			return fmt.Errorf("insert activity: %w", err)
		}
		return s.bus.Emit(ctx, tx, Removed{Subject: subj, By: by(actor), AttachmentID: a.ID, Filename: a.Filename,
			At: s.now().UTC()})
	})
}

// load reads one attachment of the issue; lock takes the row lock so concurrent deletes
// serialize (the second one finds nothing).
func load(ctx context.Context, db bun.IDB, issueID, id uuid.UUID, lock bool) (*store.Attachment, error) {
	a := new(store.Attachment)
	q := db.NewSelect().Model(a).Where("id = ? AND issue_id = ?", id, issueID)
	if lock {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		if store.IsNotFound(err) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("load attachment: %w", err)
	}
	return a, nil
}

// by is the actor as events name them.
func by(a issue.Actor) issue.By {
	id := a.UserID
	return issue.By{ID: &id, Email: a.Email, IP: a.IP, UserAgent: a.UserAgent}
}

// storageError marks a storage failure as ErrStorage, keeping the cause for the log.
// A request that was cancelled or timed out stays what it is.
func storageError(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s attachment file: %w", op, err)
	}
	return fmt.Errorf("%s attachment file: %w: %w", op, ErrStorage, err)
}

// errOverCap is what capReader returns once more than its limit is read.
var errOverCap = errors.New("attachment: over the size limit")

// capReader passes at most left bytes through and fails with errOverCap on the first
// byte beyond, so an over-limit upload stops right there. err keeps a read error of r,
// telling it apart from a failure of the storage.
type capReader struct {
	r    io.Reader
	left int64
	err  error
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, errOverCap
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, errOverCap
	}
	if err != nil && !errors.Is(err, io.EOF) {
		c.err = err
	}
	return n, err
}

// partialRemover is a storage that can leave partial files behind when its process
// dies mid-write (Local's partial files, S3's incomplete multipart uploads).
type partialRemover interface {
	RemoveStalePartials(ctx context.Context, olderThan time.Duration) (int, error)
}

// stalePartialAge is when a partial file counts as left by a crash: far above the one
// minute an upload's body may stay silent.
const stalePartialAge = time.Hour

// sweepBatch is how many orphaned files one Sweep round removes.
const sweepBatch = 100

// Sweep removes the files whose rows were deleted (an attachment deleted, or an issue
// deleted with its attachments; see migration 0017) or moved to another storage
// (Migrate) at least grace ago, and those of uploads that never got their row
// (queued by Store) at least max(grace, stalePartialAge) ago, from the storage each
// is in, and returns how many it removed. Concurrent sweeps skip each other's names. A
// file that cannot be removed stays queued for the next sweep; one already missing
// counts as removed.
func (s *Service) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	removed := 0
	for _, files := range s.files.all {
		p, ok := files.(partialRemover)
		if !ok {
			continue
		}
		n, err := p.RemoveStalePartials(ctx, stalePartialAge)
		if err != nil {
			s.log.Warn("partial attachment files not swept", "storage", files.Location(), "err", err)
		}
		removed += n
	}
	for {
		n, more, err := s.sweepRound(ctx, grace)
		removed += n
		if err != nil || !more {
			return removed, err
		}
	}
}

func (s *Service) sweepRound(ctx context.Context, grace time.Duration) (removed int, more bool, err error) {
	err = store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		var orphans []struct {
			Name    string   `bun:"stored_name"`
			Storage Location `bun:"storage"`
		}
		if err := tx.NewRaw(`SELECT stored_name, storage FROM attachment_orphans
			WHERE created_at <= now() - make_interval(secs => CASE WHEN upload THEN greatest(?, ?) ELSE ? END)
			ORDER BY created_at LIMIT ? FOR UPDATE SKIP LOCKED`,
			grace.Seconds(), stalePartialAge.Seconds(), grace.Seconds(), sweepBatch).Scan(ctx, &orphans); err != nil {
			return fmt.Errorf("read orphaned attachments: %w", err)
		}
		more = len(orphans) == sweepBatch
		var gone [][]any
		for _, o := range orphans {
			files, err := s.files.At(o.Storage)
			if err == nil {
				err = files.Remove(ctx, o.Name)
			}
			if err != nil && !errors.Is(err, ErrFileNotFound) {
				s.log.Warn("orphaned attachment file not removed", "storedName", o.Name, "storage", o.Storage, "err", err)
				more = false // leave it for a later sweep rather than spin on it
				continue
			}
			gone = append(gone, []any{o.Name, o.Storage})
		}
		if len(gone) == 0 {
			return nil
		}
		if _, err := tx.NewDelete().Table("attachment_orphans").Where("(stored_name, storage) IN (?)", bun.In(gone)).Exec(ctx); err != nil {
			return fmt.Errorf("clear orphaned attachments: %w", err)
		}
		removed = len(gone)
		return nil
	})
	return removed, more, err
}
