package work

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/store"
)

// attachmentResponse is AttachmentResponse in api/openapi/86-attachments.yaml; the stored
// name and any path stay inside.
type attachmentResponse struct {
	ID          uuid.UUID `json:"id"`
	IssueID     uuid.UUID `json:"issueId"`
	UploaderID  uuid.UUID `json:"uploaderId"`
	Filename    string    `json:"filename"`
	ContentType string    `json:"contentType"`
	Size        int64     `json:"size"`
	CreatedAt   string    `json:"createdAt"`
}

func toAttachmentResponse(a *store.Attachment) attachmentResponse {
	return attachmentResponse{ID: a.ID, IssueID: a.IssueID, UploaderID: a.UploaderID, Filename: a.Filename,
		ContentType: a.ContentType, Size: a.Size, CreatedAt: core.Instant(a.CreatedAt)}
}

// attachments is the attachment service over the server's database, bus and storage.
func (s *handlers) attachments() *attachment.Service {
	return attachment.NewService(s.DB, s.Bus, s.Attachments, s.Log)
}

func (s *handlers) listAttachments(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	svc := s.attachments()
	subj, err := svc.Issue(c.UserContext(), issueProject(a), ref)
	if err != nil {
		return err
	}
	list, err := svc.List(c.UserContext(), subj.IssueID)
	if err != nil {
		return err
	}
	out := make([]attachmentResponse, len(list))
	for i := range list {
		out[i] = toAttachmentResponse(&list[i])
	}
	return c.JSON(out)
}

// downloadAttachment streams the file (never whole in memory) with its stored type. It
// is always offered as a download, never rendered: Content-Disposition attachment,
// nosniff, and a sandboxing CSP for a browser that opens it anyway. One byte range
// (`Range: bytes=…`) is answered 206; a file in a bucket that presigns
// (TW_S3_PRESIGN) is answered 302 to a presigned address instead, after the same
// checks.
func (s *handlers) downloadAttachment(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	id, err := core.PathUUID(c, "attachmentId")
	if err != nil {
		return err
	}
	svc := s.attachments()
	subj, err := svc.Issue(c.UserContext(), issueProject(a), ref)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	rec, err := svc.Get(ctx, subj.IssueID, id)
	if err != nil {
		return err
	}
	disposition := contentDisposition(rec.Filename)
	if url, ok, err := svc.PresignedURL(ctx, rec, disposition); err != nil || ok {
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.Redirect(url, fiber.StatusFound)
	}
	c.Set(fiber.HeaderContentType, rec.ContentType)
	c.Set(fiber.HeaderContentDisposition, disposition)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'; sandbox")
	c.Set(fiber.HeaderCacheControl, "private, no-cache")
	c.Set(fiber.HeaderAcceptRanges, "bytes")
	off, n, partial, ok := byteRange(c.Get(fiber.HeaderRange), rec.Size)
	if !ok {
		c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes */%d", rec.Size))
		return core.NewError(fiber.StatusRequestedRangeNotSatisfiable, "BAD_REQUEST", "RANGE_NOT_SATISFIABLE")
	}
	if partial {
		body, err := svc.OpenRange(ctx, rec, off, n)
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, rec.Size))
		return c.Status(fiber.StatusPartialContent).SendStream(body, int(n))
	}
	body, size, err := svc.Open(ctx, rec)
	if err != nil {
		return err
	}
	// fasthttp sends exactly size bytes and closes body once written.
	return c.SendStream(body, int(size))
}

// byteRange reads a Range header against a file of size bytes: one range of the forms
// `bytes=a-b`, `bytes=a-` and `bytes=-n` is partial; no header, another unit, several
// ranges or a malformed one is the whole file (a server may ignore Range); a range that
// starts past the end is not ok (416).
func byteRange(h string, size int64) (off, n int64, partial, ok bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, size, false, true
	}
	first, last, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, size, false, true
	}
	if first == "" { // the last n bytes
		suffix, err := strconv.ParseInt(last, 10, 64)
		if err != nil || suffix < 0 {
			return 0, size, false, true
		}
		if suffix == 0 {
			return 0, 0, false, false
		}
		suffix = min(suffix, size)
		return size - suffix, suffix, true, true
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil || start < 0 {
		return 0, size, false, true
	}
	end := size - 1
	if last != "" {
		if end, err = strconv.ParseInt(last, 10, 64); err != nil || end < start {
			return 0, size, false, true
		}
		end = min(end, size-1)
	}
	if start >= size {
		return 0, 0, false, false
	}
	return start, end - start + 1, true, true
}

func (s *handlers) deleteAttachment(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Member)
	if err != nil {
		return err
	}
	id, err := core.PathUUID(c, "attachmentId")
	if err != nil {
		return err
	}
	admin := a.Role.AtLeast(project.Admin)
	if err := s.attachments().Delete(c.UserContext(), issueProject(a), issueActor(c, a), admin, ref, id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// contentDisposition is `attachment; filename="…"` with an ASCII fallback (quotes,
// backslashes, control and non-ASCII characters become `_`), plus RFC 5987's filename*
// parameter (UTF-8, percent-encoded) carrying the exact name whenever the fallback had
// to change it.
func contentDisposition(name string) string {
	var fallback strings.Builder
	for _, r := range name {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			fallback.WriteByte('_')
			continue
		}
		fallback.WriteRune(r)
	}
	v := `attachment; filename="` + fallback.String() + `"`
	if fallback.String() != name {
		v += "; filename*=UTF-8''" + rfc5987(name)
	}
	return v
}

// rfc5987 percent-encodes s's UTF-8 bytes except RFC 5987's attr-char set.
func rfc5987(s string) string {
	var b strings.Builder
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9',
			strings.IndexByte("!#$&+-.^_`|~", ch) >= 0:
			b.WriteByte(ch)
		default:
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}

// SweepAttachments removes the files of attachment rows deleted at least
// Config.AttachmentDeleteGrace ago (attachment.Sweep); what fails stays queued for the
// next sweep. Every API process runs it every attachmentSweepInterval (RunSweeps).
func SweepAttachments(ctx context.Context, env *core.Env) (int, error) {
	s := &handlers{Env: env}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return s.attachments().Sweep(ctx, s.Cfg.AttachmentDeleteGrace)
}

// attachmentSweepInterval is how often each API process sweeps; concurrent sweeps of
// several replicas skip each other's rows.
const attachmentSweepInterval = 10 * time.Minute

// RunSweeps sweeps deleted attachments' files at start and every
// attachmentSweepInterval until ctx ends.
func RunSweeps(ctx context.Context, env *core.Env) error {
	s := &handlers{Env: env}
	t := time.NewTicker(attachmentSweepInterval)
	defer t.Stop()
	for {
		if n, err := SweepAttachments(ctx, env); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			s.Log.Warn("sweep deleted attachment files", "err", err)
		} else if n > 0 {
			s.Log.Info("deleted attachment files removed", "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
