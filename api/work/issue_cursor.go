package work

import (
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
func issueListAfter(pr core.PageRequest, a *project.Access, f issue.Filter) (*issue.ListKey, error) {
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
