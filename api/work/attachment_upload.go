package work

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"regexp"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
)

// uploadOverhead is what a multipart body may carry beyond the file: boundaries, part
// headers, small form fields. A Content-Length over limit + overhead is refused before
// the body is used.
const uploadOverhead = 1 << 20

// uploadPath matches the upload route as the router does (case-insensitive, optional
// trailing slash); core.BodyGuard leaves its body streaming. A path it misses is buffered
// under BodyLimit: safe, only smaller.
var uploadPath = regexp.MustCompile(`(?i)^/api/v1/projects/[^/]+/(issues/[^/]+/attachments|import)/?$`)

func IsUploadRoute(c *fiber.Ctx) bool {
	return c.Method() == fiber.MethodPost && uploadPath.MatchString(c.Path())
}

// fileTooLarge is the 413 of an upload over the per-file limit.
func fileTooLarge(limit int64) *core.Error {
	return core.NewError(fiber.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "FILE_TOO_LARGE", "limit", strconv.FormatInt(limit, 10))
}

// uploadAttachment stores the one part named `file` of a multipart/form-data body,
// streamed (never whole in memory), then commits its record. The project, role and issue
// are checked before the body is read.
func (s *handlers) uploadAttachment(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Member)
	if err != nil {
		return err
	}
	svc := s.attachments()
	subj, err := svc.Issue(c.UserContext(), issueProject(a), ref)
	if err != nil {
		return err
	}
	boundary, err := multipartBoundary(c.Get(fiber.HeaderContentType))
	if err != nil {
		return err
	}
	limit := s.Cfg.MaxUploadBytes
	// core.BodyGuard settles the unread body after the answer.
	if cl := c.Request().Header.ContentLength(); cl > 0 && int64(cl) > limit+uploadOverhead {
		return fileTooLarge(limit)
	}
	body := core.RequestBody(c)
	// The whole body is capped too, so parts beside the file cannot stream forever.
	total := &io.LimitedReader{R: body, N: limit + uploadOverhead + 1}

	// Streaming the file runs without the request deadline (core.StreamBody's idle timeout
	// guards it) but stops when a shutdown's grace runs out (the partial file is removed
	// and the client told 503); the database work after it gets a deadline of its own.
	ctx, stop := s.UntilHardStop(c.UserContext())
	defer stop()
	// A read blocked on a silent client must end too (registered after stop, so it
	// is unregistered before stop cancels ctx on an ordinary return).
	unhook := context.AfterFunc(ctx, body.Interrupt)
	defer unhook()
	st, file, err := s.receiveFile(ctx, svc, multipart.NewReader(total, boundary), limit, total)
	if err != nil {
		if ctx.Err() != nil {
			return core.ErrShuttingDown
		}
		return err
	}
	dbCtx, cancel := context.WithTimeout(ctx, s.Cfg.RequestTimeout)
	defer cancel()
	rec, err := svc.Record(dbCtx, issueProject(a), issueActor(c, a), issue.Ref{ID: subj.IssueID}, st, file)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(toAttachmentResponse(rec))
}

// receiveFile walks the parts: exactly one file part, named `file`, is stored; other
// fields are read past. A file part is a part named `file` or any part with a filename.
// On any error nothing stays stored.
func (s *handlers) receiveFile(ctx context.Context, svc *attachment.Service, mr *multipart.Reader, limit int64, total *io.LimitedReader) (st attachment.Stored, f attachment.File, err error) {
	stored := false
	defer func() {
		if err != nil && stored {
			svc.Discard(ctx, st)
		}
	}()
	// An error while reading is the body's fault: over the cap, cut short or malformed.
	bodyError := func() error {
		if total.N <= 0 {
			return fileTooLarge(limit)
		}
		return core.BadRequest("MALFORMED_MULTIPART")
	}
	for {
		part, perr := mr.NextRawPart()
		if errors.Is(perr, io.EOF) {
			break
		}
		if perr != nil {
			return st, f, bodyError()
		}
		if part.FormName() != "file" && part.FileName() == "" {
			if _, err := io.Copy(io.Discard, part); err != nil {
				return st, f, bodyError()
			}
			continue
		}
		if stored {
			return st, f, core.BadRequest("TOO_MANY_FILES")
		}
		if part.FormName() != "file" {
			return st, f, core.BadRequest("MISSING_FILE_PART")
		}
		if f, err = partFile(part); err != nil {
			return st, f, err
		}
		st, err = svc.Store(ctx, f.Filename, part, limit)
		switch {
		case errors.Is(err, attachment.ErrTooLarge):
			return st, f, fileTooLarge(limit)
		case errors.Is(err, attachment.ErrContent):
			return st, f, bodyError()
		case err != nil:
			return st, f, err
		}
		stored = true
	}
	if !stored {
		return st, f, core.BadRequest("MISSING_FILE_PART")
	}
	return st, f, nil
}

// multipartBoundary reads the boundary of a multipart/form-data Content-Type.
func multipartBoundary(contentType string) (string, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return "", core.BadRequest("NOT_MULTIPART")
	}
	return params["boundary"], nil
}

// partFile checks the file part's name and type: the base name, not blank, at most 255
// characters; the part's Content-Type (default application/octet-stream) as a valid media
// type of at most 127 characters, stored in canonical form.
func partFile(part *multipart.Part) (attachment.File, error) {
	var f core.Fields
	// FileName is already the base name of a `/` path; CleanFilename also strips `\`.
	name := attachment.CleanFilename(part.FileName())
	switch {
	case name == "":
		f.Add("filename", "BLANK", "field.BLANK")
	case attachment.FilenameTooLong(name):
		f.Add("filename", "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(attachment.MaxFilename))
	}
	ct := attachment.DefaultContentType
	if raw := strings.TrimSpace(part.Header.Get(fiber.HeaderContentType)); raw != "" {
		mt, params, err := mime.ParseMediaType(raw)
		if err == nil {
			ct = mime.FormatMediaType(mt, params)
		}
		switch {
		case err != nil || ct == "":
			f.Add("contentType", "MEDIA_TYPE", "field.MEDIA_TYPE")
		case len(ct) > attachment.MaxContentType:
			f.Add("contentType", "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(attachment.MaxContentType))
		}
	}
	return attachment.File{Filename: name, ContentType: ct}, f.Err()
}
