package api

import (
	"errors"

	"github.com/taskweave/taskweave/domain/customfield"
)

// customFieldErrors maps custom field definitions and options.
var customFieldErrors = []errorMapping{
	{customfield.ErrNotFound, 404, "NOT_FOUND", "CUSTOM_FIELD_NOT_FOUND"},
	{customfield.ErrOptionNotFound, 404, "NOT_FOUND", "OPTION_NOT_FOUND"},
	{customfield.ErrDuplicateName, 409, "CONFLICT", "DUPLICATE_NAME"},
	{customfield.ErrDuplicateLabel, 409, "CONFLICT", "DUPLICATE_LABEL"},
	{customfield.ErrNotDropdown, 400, "BAD_REQUEST", "CUSTOM_FIELD_NOT_DROPDOWN"},
	{customfield.ErrDuplicateFields, 400, "BAD_REQUEST", "DUPLICATE_FIELD"},
}

// customFieldValueError maps a value its field cannot hold, or a required field left
// empty, to 400 BAD_REQUEST naming the field (docs/api-conventions.md#custom-fields).
func customFieldValueError(err error) *Error {
	var inv *customfield.InvalidError
	if errors.As(err, &inv) {
		e := badRequest("CUSTOM_FIELD_INVALID")
		if inv.Type == "" {
			e.Key, e.Args = "customField.invalid.FIELD", []string{"field", inv.FieldID.String()}
		} else {
			e.Key, e.Args = "customField.invalid."+inv.Type, []string{"field", inv.FieldName}
		}
		return e
	}
	var req *customfield.RequiredError
	if errors.As(err, &req) {
		return badRequest("CUSTOM_FIELD_REQUIRED", "field", req.FieldName)
	}
	return nil
}
