package api

import (
	"errors"

	"github.com/taskweave/taskweave/domain/comment"
)

// commentErrors maps the comment sentinels to docs/api-conventions.md#errors;
// comment.ErrEmpty is commentEmpty's.
var commentErrors = []errorMapping{
	{comment.ErrNotFound, 404, "NOT_FOUND", "COMMENT_NOT_FOUND"},
	{comment.ErrNotAuthor, 403, "FORBIDDEN", "NOT_AUTHOR"},
	{comment.ErrNotAuthorOrAdmin, 403, "FORBIDDEN", "NOT_AUTHOR_OR_ADMIN"},
}

// commentEmpty renders the domain's "nothing left after sanitizing" (a body of only
// <script>, say) as the VALIDATION_ERROR naming body.
func commentEmpty(err error) *Error {
	if !errors.Is(err, comment.ErrEmpty) {
		return nil
	}
	var f fields
	f.add("body", "BLANK", "field.SANITIZED_EMPTY")
	return f.err().(*Error)
}
