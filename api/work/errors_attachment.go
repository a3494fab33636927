package work

import (
	"errors"
	"net/http"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/attachment"
)

// attachmentErrors maps the attachment sentinels to docs/api-conventions.md#errors. A
// storage failure is 503 (the record is kept; trying again later can succeed); a body
// that could not be read is the client's.
var attachmentErrors = []core.ErrorMapping{
	{Err: attachment.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "ATTACHMENT_NOT_FOUND"},
	{Err: attachment.ErrFileNotFound, Status: 404, Code: "NOT_FOUND", Reason: "ATTACHMENT_FILE_MISSING"},
	{Err: attachment.ErrNotUploader, Status: 403, Code: "FORBIDDEN", Reason: "NOT_UPLOADER"},
	{Err: attachment.ErrStorage, Status: 503, Code: "UNAVAILABLE", Reason: "STORAGE_UNAVAILABLE"},
	{Err: attachment.ErrContent, Status: 400, Code: "BAD_REQUEST", Reason: "MALFORMED_MULTIPART"},
}

// attachmentTooLarge renders attachment.ErrTooLarge where the limit is not at hand: the
// upload handler answers it itself with the limit in the message (fileTooLarge).
func attachmentTooLarge(err error) *core.Error {
	if !errors.Is(err, attachment.ErrTooLarge) {
		return nil
	}
	return &core.Error{Status: http.StatusRequestEntityTooLarge, Code: "PAYLOAD_TOO_LARGE", Reason: "FILE_TOO_LARGE",
		Key: "error.PAYLOAD_TOO_LARGE"}
}
