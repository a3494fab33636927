package api

import "github.com/taskweave/taskweave/domain/attachment"

// attachmentErrors maps the attachment sentinels to docs/api-conventions.md#errors.
// attachment.ErrTooLarge is not here: the upload handler answers it with the limit in the
// message. A storage failure is 503 (the record is kept; trying again later can succeed).
var attachmentErrors = []errorMapping{
	{attachment.ErrNotFound, 404, "NOT_FOUND", "ATTACHMENT_NOT_FOUND"},
	{attachment.ErrFileNotFound, 404, "NOT_FOUND", "ATTACHMENT_FILE_MISSING"},
	{attachment.ErrNotUploader, 403, "FORBIDDEN", "NOT_UPLOADER"},
	{attachment.ErrStorage, 503, "UNAVAILABLE", "STORAGE_UNAVAILABLE"},
}
