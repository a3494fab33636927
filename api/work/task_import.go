package work

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/task"
	"github.com/taskweave/taskweave/store"
)

// importFieldLimit bounds each form field of an import besides the file.
const importFieldLimit = 64 << 10

// importProject stores the uploaded file (streamed into the task's chunks, never whole
// in memory) with the task, then answers 202. Project ADMIN.
func (s *handlers) importProject(c *fiber.Ctx) error {
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	boundary, err := multipartBoundary(c.Get(fiber.HeaderContentType))
	if err != nil {
		return err
	}
	limit := s.Cfg.MaxUploadBytes
	if cl := c.Request().Header.ContentLength(); cl > 0 && int64(cl) > limit+uploadOverhead {
		return fileTooLarge(limit)
	}
	body := core.RequestBody(c)
	total := &io.LimitedReader{R: body, N: limit + uploadOverhead + 1}
	ctx, stop := s.UntilHardStop(c.UserContext())
	defer stop()
	unhook := context.AfterFunc(ctx, body.Interrupt)
	defer unhook()
	p := core.Principal(c)
	actor := task.Actor{UserID: p.UserID, Email: p.Email, DisplayName: p.DisplayName, IP: core.Meta(c).IP, UserAgent: core.Meta(c).UserAgent}
	var t *store.Task
	err = store.InTx(ctx, s.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
		var w io.WriteCloser
		var err error
		if t, w, err = task.StartImport(ctx, tx, s.Bus, &a.Project, actor); err != nil {
			return err
		}
		fields, err := receiveImport(multipart.NewReader(total, boundary), w, total, limit)
		if err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		params, err := parseImportFields(fields)
		if err != nil {
			return err
		}
		return task.SetImportParams(ctx, tx, t, params)
	})
	if err != nil {
		if ctx.Err() != nil {
			return core.ErrShuttingDown
		}
		return err
	}
	return taskAccepted(c, t)
}

// receiveImport copies the `file` part to w and returns the other fields.
func receiveImport(mr *multipart.Reader, w io.Writer, total *io.LimitedReader, limit int64) (map[string]string, error) {
	bodyError := func() error {
		if total.N <= 0 {
			return fileTooLarge(limit)
		}
		return core.BadRequest("MALFORMED_MULTIPART")
	}
	fields := map[string]string{}
	got := false
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bodyError()
		}
		if part.FormName() == "file" {
			if got {
				return nil, core.BadRequest("TOO_MANY_FILES")
			}
			if _, err := io.Copy(w, part); err != nil {
				var apiErr *core.Error
				if errors.As(err, &apiErr) {
					return nil, err
				}
				if total.N <= 0 {
					return nil, fileTooLarge(limit)
				}
				return nil, err
			}
			got = true
			continue
		}
		v, err := io.ReadAll(io.LimitReader(part, importFieldLimit+1))
		if err != nil {
			return nil, bodyError()
		}
		if len(v) > importFieldLimit {
			return nil, core.BadRequest("FIELD_TOO_LONG", "field", part.FormName())
		}
		fields[part.FormName()] = string(v)
	}
	if !got {
		return nil, core.BadRequest("MISSING_FILE_PART")
	}
	return fields, nil
}

// parseImportFields validates the form fields of an import.
func parseImportFields(fields map[string]string) (task.ImportParams, error) {
	var p task.ImportParams
	p.Format = strings.TrimSpace(fields["format"])
	if p.Format == "" {
		return p, core.Required("format")
	}
	if !slices.Contains(task.ImportFormats, p.Format) {
		return p, core.BadRequest("INVALID_ENUM", "field", "format", "values", strings.Join(task.ImportFormats, ", "))
	}
	switch fields["dryRun"] {
	case "", "false":
	case "true":
		p.DryRun = true
	default:
		return p, core.BadRequest("WRONG_TYPE", "field", "dryRun")
	}
	if m := strings.TrimSpace(fields["userMapping"]); m != "" {
		if err := json.Unmarshal([]byte(m), &p.UserMapping); err != nil {
			return p, core.BadRequest("WRONG_TYPE", "field", "userMapping")
		}
	}
	return p, nil
}

func (s *handlers) undoTask(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	t, err := task.QueueUndo(c.UserContext(), s.DB.Bun, s.Bus, id, taskViewer(c))
	if err != nil {
		return err
	}
	return taskAccepted(c, t)
}
