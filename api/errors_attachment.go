package api

import (
	"errors"
	"net/http"

	"github.com/taskweave/taskweave/domain/attachment"
)

// attachmentErrors maps the attachment sentinels to docs/api-conventions.md#errors. A
// storage failure is 503 (the record is kept; trying again later can succeed); a body
// that could not be read is the client's.
var attachmentErrors = []errorMapping{
	{attachment.ErrNotFound, 404, "NOT_FOUND", "ATTACHMENT_NOT_FOUND"},
	{attachment.ErrFileNotFound, 404, "NOT_FOUND", "ATTACHMENT_FILE_MISSING"},
	{attachment.ErrNotUploader, 403, "FORBIDDEN", "NOT_UPLOADER"},
	{attachment.ErrStorage, 503, "UNAVAILABLE", "STORAGE_UNAVAILABLE"},
	{attachment.ErrContent, 400, "BAD_REQUEST", "MALFORMED_MULTIPART"},
}

// attachmentTooLarge renders attachment.ErrTooLarge where the limit is not at hand: the
// upload handler answers it itself with the limit in the message (fileTooLarge).
func attachmentTooLarge(err error) *Error {
	if !errors.Is(err, attachment.ErrTooLarge) {
		return nil
	}
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: "PAYLOAD_TOO_LARGE", Reason: "FILE_TOO_LARGE",
		Key: "error.PAYLOAD_TOO_LARGE"}
}
