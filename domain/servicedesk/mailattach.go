package servicedesk

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/issue"
)

// WithAttachments returns a copy of s that keeps the files of ingested e-mails as
// attachments of their ticket, through files (the uploads' storage), each at most limit
// bytes (TW_MAX_UPLOAD_BYTES, the upload limit). Without it an e-mail's files are not
// kept, and the ticket's comment says so.
func (s *Service) WithAttachments(files *attachment.Service, limit int64) *Service {
	c := *s
	c.files, c.maxFile = files, limit
	return &c
}

// mailFile is one attachment of an e-mail on its way to the ticket: stored (not yet
// recorded), or refused with the reason the ticket's comment gives.
type mailFile struct {
	att    *MailAttachment
	stored *attachment.Stored
	refuse string
}

// storeAttachments writes the files of e that will be kept to the uploads' storage,
// before the ingestion's transaction (a file is streamed, never written under a
// transaction); the ones over the per-file limit, after MaxMailAttachments or with no
// storage configured are only named. A message already ingested stores nothing. On
// error nothing stays stored.
func (s *Service) storeAttachments(ctx context.Context, e *Email) ([]mailFile, error) {
	if len(e.Attachments) == 0 {
		return nil, nil
	}
	var seen bool
	if err := s.db.NewRaw(`SELECT EXISTS (SELECT 1 FROM mail_messages WHERE message_id = ?)`, e.Key).Scan(ctx, &seen); err != nil {
		return nil, fmt.Errorf("read e-mail: %w", err)
	}
	if seen {
		return nil, nil // a duplicate: Ingest changes nothing
	}
	out := make([]mailFile, 0, len(e.Attachments))
	for i := range e.Attachments {
		a := &e.Attachments[i]
		f := mailFile{att: a}
		switch {
		case s.files == nil:
			f.refuse = "attachments of e-mails are not stored by this server"
		case i >= MaxMailAttachments:
			f.refuse = fmt.Sprintf("over the limit of %d attachments per e-mail", MaxMailAttachments)
		case int64(len(a.Data)) > s.maxFile:
			f.refuse = "over the " + formatBytes(s.maxFile) + " limit"
		default:
			st, err := s.files.Store(ctx, a.Filename, bytes.NewReader(a.Data), s.maxFile)
			if err != nil {
				s.discardAttachments(ctx, out)
				return nil, fmt.Errorf("store e-mail attachment: %w", err)
			}
			f.stored = &st
		}
		out = append(out, f)
	}
	return out, nil
}

// discardAttachments removes the stored files of an e-mail whose ingestion did not
// record them (a duplicate, a skipped e-mail, a failed transaction).
func (s *Service) discardAttachments(ctx context.Context, files []mailFile) {
	for _, f := range files {
		if f.stored != nil {
			s.files.Discard(ctx, *f.stored)
		}
	}
}

// recordAttachments records the stored files on the ticket in tx, uploaded by the
// desk's project owner (the ticket's reporter; an e-mail's From is not proof of an
// account), and writes one system comment naming the files that were not kept.
func (s *Service) recordAttachments(ctx context.Context, tx bun.Tx, t *target, ref issue.Ref, files []mailFile) error {
	if len(files) == 0 {
		return nil
	}
	p := Project{ID: t.ProjectID, Key: t.Key, WorkflowID: t.WorkflowID}.issueProject()
	by := issue.Actor{Actor: audit.Actor{UserID: t.OwnerID, Email: t.OwnerEmail}, DisplayName: t.OwnerName}
	var notes []string
	for _, f := range files {
		if f.stored == nil {
			notes = append(notes, fmt.Sprintf("Attachment %s (%s) was not kept: %s.", f.att.Filename, formatBytes(int64(len(f.att.Data))), f.refuse))
			continue
		}
		if _, err := s.files.RecordIn(ctx, tx, p, by, ref, *f.stored, attachment.File{Filename: f.att.Filename, ContentType: f.att.ContentType}); err != nil {
			return err
		}
	}
	if len(notes) == 0 {
		return nil
	}
	_, err := s.comments.WithTx(tx).Create(ctx, p, nil, ref, strings.Join(notes, "\n\n"))
	return err
}

// formatBytes is a size as the comment gives it: "30 MB", "2.5 MB", "12 KB", "80 bytes"
// (MB and KB of 1,024).
func formatBytes(n int64) string {
	unit := func(v float64, name string) string {
		return strconv.FormatFloat(v, 'f', -1, 64) + " " + name
	}
	switch {
	case n >= 1<<20:
		return unit(float64(n*10>>20)/10, "MB")
	case n >= 1<<10:
		return unit(float64(n*10>>10)/10, "KB")
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
