package work

import (
	"errors"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/customfield"
)

// customFieldErrors maps custom field definitions and options.
var customFieldErrors = []core.ErrorMapping{
	{Err: customfield.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "CUSTOM_FIELD_NOT_FOUND"},
	{Err: customfield.ErrOptionNotFound, Status: 404, Code: "NOT_FOUND", Reason: "OPTION_NOT_FOUND"},
	{Err: customfield.ErrDuplicateName, Status: 409, Code: "CONFLICT", Reason: "DUPLICATE_NAME"},
	{Err: customfield.ErrDuplicateLabel, Status: 409, Code: "CONFLICT", Reason: "DUPLICATE_LABEL"},
	{Err: customfield.ErrNotDropdown, Status: 400, Code: "BAD_REQUEST", Reason: "CUSTOM_FIELD_NOT_DROPDOWN"},
	{Err: customfield.ErrDuplicateFields, Status: 400, Code: "BAD_REQUEST", Reason: "DUPLICATE_FIELD"},
}

// customFieldValueError maps a value its field cannot hold, or a required field left
// empty, to 400 BAD_REQUEST naming the field (docs/api-conventions.md#custom-fields).
func customFieldValueError(err error) *core.Error {
	var inv *customfield.InvalidError
	if errors.As(err, &inv) {
		e := core.BadRequest("CUSTOM_FIELD_INVALID")
		if inv.Type == "" {
			e.Key, e.Args = "customField.invalid.FIELD", []string{"field", inv.FieldID.String()}
		} else {
			e.Key, e.Args = "customField.invalid."+inv.Type, []string{"field", inv.FieldName}
		}
		return e
	}
	var req *customfield.RequiredError
	if errors.As(err, &req) {
		return core.BadRequest("CUSTOM_FIELD_REQUIRED", "field", req.FieldName)
	}
	return nil
}
