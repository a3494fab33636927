package api

import "github.com/taskweave/taskweave/domain/comment"

// commentErrors maps the comment sentinels to docs/api-conventions.md#errors.
// comment.ErrEmpty is not here: the handlers turn it into a VALIDATION_ERROR naming body.
var commentErrors = []errorMapping{
	{comment.ErrNotFound, 404, "NOT_FOUND", "COMMENT_NOT_FOUND"},
	{comment.ErrNotAuthor, 403, "FORBIDDEN", "NOT_AUTHOR"},
	{comment.ErrNotAuthorOrAdmin, 403, "FORBIDDEN", "NOT_AUTHOR_OR_ADMIN"},
}
