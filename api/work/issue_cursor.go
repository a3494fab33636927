package work

import (
	"github.com/gofiber/fiber/v2"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/project"
)

// issueListScope is what an issue list cursor is valid for: this project's list in
// this order (a cursor of another project or order is INVALID_CURSOR).
func issueListScope(a *project.Access, f issue.Filter) string {
	return "issues/" + a.Project.ID.String() + "/" + f.OrderName()
}

// issueListAfter is the position a cursor request continues after, or nil.
// An order no cursor can walk (issue.Filter.Keyset) refuses one.
func issueListAfter(pr core.PageRequest, a *project.Access, f issue.Filter) (*issue.ListKey, error) {
	if pr.Cursor != nil && !f.Keyset() {
		return nil, core.BadRequest("INVALID_CURSOR")
	}
	scope := issueListScope(a, f)
	n := len(f.CursorKeys(issue.ListKey{}))
	keys, err := pr.After(scope, n)
	if keys == nil || err != nil {
		return nil, err
	}
	k, ok := f.ParseCursorKeys(keys)
	if !ok {
		return nil, core.BadRequest("INVALID_CURSOR")
	}
	return &k, nil
}

// issueListNext is the list's nextCursor (core.PageRequest.Next), none in an order no
// cursor can walk.
func issueListNext(c *fiber.Ctx, pr core.PageRequest, a *project.Access, f issue.Filter, views []*issue.View, total int) *string {
	if !f.Keyset() {
		return nil
	}
	return pr.Next(c, issueListScope(a, f), len(views), total, func(i int) []string { return f.CursorKeys(f.KeyOf(views[i])) })
}
