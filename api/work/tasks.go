package work

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/valyala/fasthttp"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/task"
	"github.com/taskweave/taskweave/store"
)

// taskListPageSize is GET /tasks's default page size.
const taskListPageSize = 20

// taskViewer is the caller as the task rules see them.
func taskViewer(c *fiber.Ctx) task.Viewer {
	p := core.Principal(c)
	return task.Viewer{UserID: p.UserID, Admin: p.IsAdmin()}
}

func (s *handlers) listTasks(c *fiber.Ctx) error {
	if v := c.Query("mine"); v != "" && v != "true" {
		return core.BadRequest("INVALID_MINE")
	}
	pr, err := core.ParsePage(c, taskListPageSize)
	if err != nil {
		return err
	}
	after, err := pr.AfterTimeID("tasks")
	if err != nil {
		return err
	}
	ts, total, err := task.ListMine(c.UserContext(), s.DB.Bun, core.Principal(c).UserID, after, pr.Offset(), pr.Limit())
	if err != nil {
		return err
	}
	next := pr.Next(c, "tasks", len(ts), total, func(i int) []string { return core.TimeIDKeys(ts[i].CreatedAt, ts[i].ID) })
	ts = core.Trim(ts, pr)
	views := make([]task.View, len(ts))
	for i := range ts {
		views[i] = task.NewView(&ts[i])
	}
	return c.JSON(core.NewPage(views, pr, total, next))
}

func (s *handlers) getTask(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	t, err := task.Get(c.UserContext(), s.DB.Bun, id, taskViewer(c))
	if err != nil {
		return err
	}
	return c.JSON(task.NewView(t))
}

func (s *handlers) cancelTask(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	t, err := task.Cancel(c.UserContext(), s.DB.Bun, id, taskViewer(c))
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(task.NewView(t))
}

// taskAccepted answers 202 with the queued task's id and its Location.
func taskAccepted(c *fiber.Ctx, t *store.Task) error {
	c.Location("/api/v1/tasks/" + t.ID.String())
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"taskId": t.ID})
}

// bulkRequest is POST /projects/{key}/issues/bulk's body.
type bulkRequest struct {
	IssueKeys []string          `json:"issueKeys"`
	Filter    map[string]string `json:"filter"`
	Changes   *bulkChanges      `json:"changes"`
}

// bulkChanges keeps assigneeId and sprintId raw: null clears, absent leaves alone.
type bulkChanges struct {
	StatusID          *string                   `json:"statusId"`
	AssigneeID        json.RawMessage           `json:"assigneeId"`
	Priority          *string                   `json:"priority"`
	AddLabelIDs       []string                  `json:"addLabelIds"`
	RemoveLabelIDs    []string                  `json:"removeLabelIds"`
	SprintID          json.RawMessage           `json:"sprintId"`
	VersionID         *string                   `json:"versionId"`
	CustomFieldValues []customFieldValueRequest `json:"customFieldValues"`
	Delete            bool                      `json:"delete"`
}

// parseBulkChanges validates the changes into the task's terms.
func parseBulkChanges(r *bulkChanges) (task.Changes, error) {
	var out task.Changes
	if r == nil {
		return out, core.Required("changes")
	}
	var err error
	if out.StatusID, err = core.OptionalID("changes.statusId", r.StatusID); err != nil {
		return out, err
	}
	if out.VersionID, err = core.OptionalID("changes.versionId", r.VersionID); err != nil {
		return out, err
	}
	if out.AssigneeID, out.ClearAssignee, err = nullableID("changes.assigneeId", r.AssigneeID); err != nil {
		return out, err
	}
	if out.SprintID, out.ClearSprint, err = nullableID("changes.sprintId", r.SprintID); err != nil {
		return out, err
	}
	if r.Priority != nil {
		v, err := issueEnum("changes.priority", *r.Priority, issue.Priorities)
		if err != nil {
			return out, err
		}
		out.Priority = &v
	}
	if out.AddLabelIDs, err = core.ParseIDs("changes.addLabelIds", r.AddLabelIDs); err != nil {
		return out, err
	}
	if out.RemoveLabelIDs, err = core.ParseIDs("changes.removeLabelIds", r.RemoveLabelIDs); err != nil {
		return out, err
	}
	if out.CustomFieldValues, err = parseCustomFieldValues(r.CustomFieldValues); err != nil {
		return out, err
	}
	out.Delete = r.Delete
	if !out.Delete && out.StatusID == nil && out.VersionID == nil && out.AssigneeID == nil && !out.ClearAssignee &&
		out.SprintID == nil && !out.ClearSprint && out.Priority == nil && len(out.AddLabelIDs) == 0 &&
		len(out.RemoveLabelIDs) == 0 && len(out.CustomFieldValues) == 0 {
		return out, core.BadRequest("NO_CHANGES")
	}
	return out, nil
}

// nullableID reads an optional id member where null means "clear".
func nullableID(field string, raw json.RawMessage) (id *uuid.UUID, clear bool, err error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return nil, false, nil
	case string(raw) == "null":
		return nil, true, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false, core.BadRequest("WRONG_TYPE", "field", field)
	}
	id, err = core.OptionalID(field, &s)
	return id, false, err
}

func (s *handlers) bulkChangeIssues(c *fiber.Ctx) error {
	var r bulkRequest
	if err := core.Decode(c, &r); err != nil {
		return err
	}
	changes, err := parseBulkChanges(r.Changes)
	if err != nil {
		return err
	}
	if (r.IssueKeys == nil) == (r.Filter == nil) {
		return core.BadRequest("BULK_TARGET")
	}
	if len(r.IssueKeys) > task.MaxBulkIssues {
		return core.BadRequest("TOO_MANY_ISSUES", "max", strconv.Itoa(task.MaxBulkIssues))
	}
	need := project.Member
	if changes.Delete {
		need = project.Admin
	}
	a, err := s.ProjectAccess(c, need)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	var ids []uuid.UUID
	if r.IssueKeys != nil {
		keys := make([]string, len(r.IssueKeys))
		for i, k := range r.IssueKeys {
			keys[i] = strings.ToUpper(k)
		}
		var unknown int
		if ids, unknown, err = task.ResolveKeys(ctx, s.DB.Bun, a.Project.ID, keys); err != nil {
			return err
		}
		if unknown >= 0 {
			return core.BadRequest("UNKNOWN_ISSUE_KEY", "field", "issueKeys["+strconv.Itoa(unknown)+"]")
		}
	} else if ids, err = s.bulkFilterIDs(c, a, r.Filter); err != nil {
		return err
	}
	p := core.Principal(c)
	actor := task.Actor{UserID: p.UserID, Email: p.Email, DisplayName: p.DisplayName, IP: core.Meta(c).IP, UserAgent: core.Meta(c).UserAgent}
	var t *store.Task
	err = store.InTx(ctx, s.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
		t, err = task.QueueBulkChange(ctx, tx, s.Bus, &a.Project, actor, ids, changes)
		return err
	})
	if err != nil {
		return err
	}
	return taskAccepted(c, t)
}

// bulkFilterIDs lists the ids of the issues the list endpoint would list for filter,
// its query parameters: at most task.MaxBulkIssues, else BAD_REQUEST.
func (s *handlers) bulkFilterIDs(c *fiber.Ctx, a *project.Access, filter map[string]string) ([]uuid.UUID, error) {
	// The filter is parsed exactly as the list's query string is, on a context of its own.
	fc := c.App().AcquireCtx(&fasthttp.RequestCtx{})
	defer c.App().ReleaseCtx(fc)
	args := fc.Context().QueryArgs()
	for k, v := range filter {
		args.Add(k, v)
	}
	f, err := parseIssueFilter(fc, core.Principal(c).UserID)
	if err != nil {
		return nil, err
	}
	views, total, err := s.issues().List(c.UserContext(), issueProject(a), f, 0, task.MaxBulkIssues)
	if err != nil {
		return nil, err
	}
	if total > task.MaxBulkIssues {
		return nil, core.BadRequest("TOO_MANY_ISSUES", "max", strconv.Itoa(task.MaxBulkIssues))
	}
	ids := make([]uuid.UUID, len(views))
	for i, v := range views {
		ids[i] = v.ID
	}
	return ids, nil
}

func (s *handlers) exportProject(c *fiber.Ctx) error {
	format := c.Query("format", task.FormatZip)
	if format != task.FormatZip && format != task.FormatCSV {
		return core.BadRequest("INVALID_ENUM", "field", "format", "values", task.FormatZip+", "+task.FormatCSV)
	}
	a, err := s.ProjectAccess(c, project.Admin)
	if err != nil {
		return err
	}
	var t *store.Task
	err = store.InTx(c.UserContext(), s.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
		t, err = task.QueueExport(ctx, tx, s.Bus, &a.Project, core.Principal(c).UserID, format)
		return err
	})
	if err != nil {
		return err
	}
	return taskAccepted(c, t)
}

// taskResult streams a finished export's result, a chunk at a time.
func (s *handlers) taskResult(c *fiber.Ctx) error {
	id, err := core.PathUUID(c, "id")
	if err != nil {
		return err
	}
	res, err := task.OpenResult(c.UserContext(), s.DB.Bun, id, taskViewer(c))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, res.Type)
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+res.Name+`"`)
	// The body is written after the handler returns, outside the request's deadline.
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		if err := res.WriteTo(context.Background(), w); err != nil {
			s.Log.Error("task result stream", "task", id, "err", err)
		}
		_ = w.Flush()
	})
	c.Response().Header.SetContentLength(int(res.Size()))
	return nil
}
