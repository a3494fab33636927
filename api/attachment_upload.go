package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
)

// The upload is the one route whose body is streamed rather than buffered (fiber's
// StreamRequestBody; bodyGuard buffers every other body up to BodyLimit).
const (
	// uploadOverhead is what a multipart body may carry beyond the file: boundaries,
	// part headers, small form fields. A Content-Length over limit + overhead is refused
	// before a byte is read.
	uploadOverhead = 1 << 20
	// uploadIdleTimeout ends an upload whose client sends nothing for this long. The
	// request deadline (RequestTimeout) does not apply while the file streams in: a large
	// file on a slow link takes minutes.
	uploadIdleTimeout = time.Minute
	// uploadDrainMax is how much of an unread body is read away after the answer, so the
	// client sees it (closing with unread data makes the kernel reset the connection,
	// which can destroy the answer in flight); more than this and the connection closes.
	uploadDrainMax = 8 << 20
	// uploadDrainTimeout bounds that draining.
	uploadDrainTimeout = 5 * time.Second
)

// uploadPath matches the upload route as the router does (case-insensitive, optional
// trailing slash). A path it misses is buffered under BodyLimit: safe, only smaller.
var uploadPath = regexp.MustCompile(`(?i)^/api/v1/projects/[^/]+/issues/[^/]+/attachments/?$`)

func isUploadRoute(c *fiber.Ctx) bool {
	return c.Method() == fiber.MethodPost && uploadPath.MatchString(c.Path())
}

const uploadBodyKey = "uploadBody"

// uploadBody is the upload's request body stream: it keeps the connection's read deadline
// moving while bytes arrive (uploadIdleTimeout) and remembers the end of the stream or its
// first error, because fasthttp's chunked stream would read the next request after its end.
type uploadBody struct {
	r       io.Reader
	conn    net.Conn
	idle    time.Duration
	lastSet time.Time
	// deadline is set when a read deadline was put on conn and must be cleared after.
	deadline bool
	err      error
}

func newUploadBody(c *fiber.Ctx) *uploadBody {
	b := &uploadBody{conn: c.Context().Conn(), idle: uploadIdleTimeout}
	if stream := c.Context().RequestBodyStream(); stream != nil {
		b.r = stream
	} else {
		// Without a length or chunked encoding there is no body; a body that bodyGuard
		// buffered (a path it did not recognize) is read from memory.
		b.r = bytes.NewReader(c.Request().Body())
	}
	return b
}

func (b *uploadBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	// Setting a deadline costs little, but not per 4 KiB read: once a second is enough.
	if now := time.Now(); b.conn != nil && b.idle > 0 && now.Sub(b.lastSet) > time.Second {
		_ = b.conn.SetReadDeadline(now.Add(b.idle))
		b.lastSet, b.deadline = now, true
	}
	n, err := b.r.Read(p)
	if err != nil {
		b.err = err
	}
	return n, err
}

// finish runs after the answer is decided: a body read to its end leaves the connection
// as it is; the rest of an unread one is drained (up to uploadDrainMax within
// uploadDrainTimeout), else the connection is closed so its unread bytes are never taken
// for the next request.
func (b *uploadBody) finish(c *fiber.Ctx) {
	defer func() {
		if b.deadline {
			_ = b.conn.SetReadDeadline(time.Time{})
		}
	}()
	if c.Response().ConnectionClose() || errors.Is(b.err, io.EOF) {
		return
	}
	if b.err == nil {
		b.idle = 0
		if b.conn != nil {
			_ = b.conn.SetReadDeadline(time.Now().Add(uploadDrainTimeout))
			b.deadline = true
		}
		_, _ = io.CopyN(io.Discard, b, uploadDrainMax)
		if errors.Is(b.err, io.EOF) {
			return
		}
	}
	c.Context().SetConnectionClose()
}

// fileTooLarge is the 413 of an upload over the per-file limit.
func fileTooLarge(limit int64) *Error {
	return newError(fiber.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "FILE_TOO_LARGE", "limit", strconv.FormatInt(limit, 10))
}

// uploadAttachment stores the one part named `file` of a multipart/form-data body,
// streamed (never whole in memory), then commits its record. The project, role and issue
// are checked before the body is read.
func (s *Server) uploadAttachment(c *fiber.Ctx) error {
	a, err := s.projectAccess(c, project.Member)
	if err != nil {
		return err
	}
	ref, err := issueRef(c)
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
	limit := s.cfg.MaxUploadBytes
	if cl := c.Request().Header.ContentLength(); cl > 0 && int64(cl) > limit+uploadOverhead {
		c.Context().SetConnectionClose()
		return fileTooLarge(limit)
	}
	body, _ := c.Locals(uploadBodyKey).(*uploadBody)
	if body == nil {
		body = newUploadBody(c)
	}
	// The whole body is capped too, so parts beside the file cannot stream forever.
	total := &io.LimitedReader{R: body, N: limit + uploadOverhead + 1}

	// Streaming the file runs without the request deadline (the idle timeout guards it);
	// the database work after it gets a deadline of its own.
	ctx := context.WithoutCancel(c.UserContext())
	st, file, err := s.receiveFile(ctx, svc, multipart.NewReader(total, boundary), limit, total)
	if err != nil {
		return err
	}
	dbCtx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
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
func (s *Server) receiveFile(ctx context.Context, svc *attachment.Service, mr *multipart.Reader, limit int64, total *io.LimitedReader) (st attachment.Stored, f attachment.File, err error) {
	stored := false
	defer func() {
		if err != nil && stored {
			svc.Discard(ctx, st)
		}
	}()
	// An error while reading is the body's fault: over the cap, cut short or malformed.
	bodyError := func(err error) error {
		if total.N <= 0 {
			return fileTooLarge(limit)
		}
		return badRequest("MALFORMED_MULTIPART")
	}
	for {
		part, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, f, bodyError(err)
		}
		if part.FormName() != "file" && part.FileName() == "" {
			if _, err := io.Copy(io.Discard, part); err != nil {
				return st, f, bodyError(err)
			}
			continue
		}
		if stored {
			return st, f, badRequest("TOO_MANY_FILES")
		}
		if part.FormName() != "file" {
			return st, f, badRequest("MISSING_FILE_PART")
		}
		if f, err = partFile(part); err != nil {
			return st, f, err
		}
		st, err = svc.Store(ctx, f.Filename, part, limit)
		switch {
		case errors.Is(err, attachment.ErrTooLarge):
			return st, f, fileTooLarge(limit)
		case errors.Is(err, attachment.ErrContent):
			return st, f, bodyError(err)
		case err != nil:
			return st, f, err
		}
		stored = true
	}
	if !stored {
		return st, f, badRequest("MISSING_FILE_PART")
	}
	return st, f, nil
}

// multipartBoundary reads the boundary of a multipart/form-data Content-Type.
func multipartBoundary(contentType string) (string, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return "", badRequest("NOT_MULTIPART")
	}
	return params["boundary"], nil
}

// partFile checks the file part's name and type: the base name, not blank, at most 255
// characters; the part's Content-Type (default application/octet-stream) as a valid media
// type of at most 127 characters, stored in canonical form.
func partFile(part *multipart.Part) (attachment.File, error) {
	var f fields
	// FileName is already the base name of a `/` path; CleanFilename also strips `\`.
	name := attachment.CleanFilename(part.FileName())
	switch {
	case name == "":
		f.add("filename", "BLANK", "field.BLANK")
	case attachment.FilenameTooLong(name):
		f.add("filename", "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(attachment.MaxFilename))
	}
	ct := attachment.DefaultContentType
	if raw := strings.TrimSpace(part.Header.Get(fiber.HeaderContentType)); raw != "" {
		mt, params, err := mime.ParseMediaType(raw)
		if err == nil {
			ct = mime.FormatMediaType(mt, params)
		}
		switch {
		case err != nil || ct == "":
			f.add("contentType", "MEDIA_TYPE", "field.MEDIA_TYPE")
		case len(ct) > attachment.MaxContentType:
			f.add("contentType", "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(attachment.MaxContentType))
		}
	}
	return attachment.File{Filename: name, ContentType: ct}, f.err()
}
