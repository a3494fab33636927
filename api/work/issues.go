package work

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
)

// issueListPageSize is GET /projects/{key}/issues' default page size
// (docs/api-conventions.md#pages).
const issueListPageSize = 50

// issues is the issue service over the server's database and event bus.
func (s *handlers) issues() *issue.Service {
	return issue.NewService(s.DB, s.Bus).WithMatches(s.matches)
}

func issueProject(a *project.Access) issue.Project {
	return issue.Project{ID: a.Project.ID, Key: a.Project.Key, WorkflowID: a.Project.WorkflowID}
}

// issueActor is the caller as the issue rules and the audit log see them.
func issueActor(c *fiber.Ctx, a *project.Access) issue.Actor {
	return issue.Actor{Actor: core.AuditActor(c), DisplayName: core.Principal(c).DisplayName, MemberRole: string(a.MemberRole)}
}

func (s *handlers) createIssue(c *fiber.Ctx) error {
	// The body is parsed first, so the access query can also read what this create
	// needs (issue.ContextRead); a bad body is still reported after a failed access.
	in, perr := parseCreateIssue(core.BodyOf(c))
	svc := s.issues()
	pre := svc.NewContextRead(perr == nil && in.NeedsFields())
	a, err := s.ProjectAccessWith(c, project.Member, &pre.Extra)
	if err != nil {
		return err
	}
	if perr != nil {
		return perr
	}
	v, err := svc.CreateRead(c.UserContext(), issueProject(a), issueActor(c, a), in, pre)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(core.ToIssueResponse(v))
}

func (s *handlers) listIssues(c *fiber.Ctx) error {
	// The project's custom fields are read in the access statement (issue.FieldTypesRead).
	types := issue.NewFieldTypesRead()
	a, err := s.ProjectAccessWith(c, project.Viewer, &types.Extra)
	if err != nil {
		return err
	}
	pr, err := core.ParsePage(c, issueListPageSize)
	if err != nil {
		return err
	}
	f, err := parseIssueFilter(c, core.Principal(c).UserID)
	if err != nil {
		return err
	}
	f.FieldTypes, f.Lang = types, core.Language(c)
	if f.After, err = issueListAfter(pr, a, f); err != nil {
		return err
	}
	views, total, exact, err := s.issues().ListCounted(c.UserContext(), issueProject(a), f, pr.Offset(), pr.Limit())
	if err != nil {
		return err
	}
	next := issueListNext(c, pr, a, f, views, total)
	views = core.Trim(views, pr)
	content := make([]core.IssueResponse, len(views))
	for i, v := range views {
		content[i] = core.ToIssueResponse(v)
	}
	// Encoded straight into the response buffer: a page is tens of kilobytes, and
	// c.JSON would first copy it into a fresh slice. appendIssuePage writes what
	// encoding/json would, without its reflection (issue_list_json.go).
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	pg := core.NewPage(content, pr, total, next)
	if f.Q != "" { // a search's total may be a bound (issue.SearchCountAhead)
		pg = core.NewCountedPage(content, pr, total, exact, next)
	}
	body := c.Response().BodyWriter()
	buf := listBuffers.Get().(*[]byte)
	defer listBuffers.Put(buf)
	if raw, ok := appendIssuePage((*buf)[:0], pg); ok {
		*buf = raw
		_, err = body.Write(raw)
		return err
	}
	return json.NewEncoder(body).Encode(pg)
}

func (s *handlers) getIssue(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Viewer)
	if err != nil {
		return err
	}
	v, err := s.issues().Get(c.UserContext(), issueProject(a), ref)
	if err != nil {
		return err
	}
	r := core.ToIssueResponse(v)
	if r.Refs, err = s.IssueRefs(c, v.ID); err != nil {
		return err
	}
	if v.ViewAudited {
		s.issueViewed(c, a, v)
	}
	return c.JSON(r)
}

func (s *handlers) patchIssue(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Member)
	if err != nil {
		return err
	}
	in, err := parsePatchIssue(core.BodyOf(c))
	if err != nil {
		return err
	}
	v, err := s.issues().Update(c.UserContext(), issueProject(a), issueActor(c, a), ref, in)
	if err != nil {
		return err
	}
	// Refs come with the change's reply too (one query); a created issue has none yet,
	// since keys are never reused and refs go with a deleted issue.
	r := core.ToIssueResponse(v)
	if r.Refs, err = s.IssueRefs(c, v.ID); err != nil {
		return err
	}
	return c.JSON(r)
}

func (s *handlers) deleteIssue(c *fiber.Ctx) error {
	a, ref, err := s.IssueAccess(c, project.Member)
	if err != nil {
		return err
	}
	if err := s.issues().Delete(c.UserContext(), issueProject(a), issueActor(c, a), ref); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
