package work

import (
	"errors"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/comment"
)

// commentErrors maps the comment sentinels to docs/api-conventions.md#errors;
// comment.ErrEmpty is commentEmpty's.
var commentErrors = []core.ErrorMapping{
	{Err: comment.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "COMMENT_NOT_FOUND"},
	{Err: comment.ErrNotAuthor, Status: 403, Code: "FORBIDDEN", Reason: "NOT_AUTHOR"},
	{Err: comment.ErrNotAuthorOrAdmin, Status: 403, Code: "FORBIDDEN", Reason: "NOT_AUTHOR_OR_ADMIN"},
}

// commentEmpty renders the domain's "nothing left after sanitizing" (a body of only
// <script>, say) as the VALIDATION_ERROR naming body.
func commentEmpty(err error) *core.Error {
	if !errors.Is(err, comment.ErrEmpty) {
		return nil
	}
	var f core.Fields
	f.Add("body", "BLANK", "field.SANITIZED_EMPTY")
	return f.Err().(*core.Error)
}
