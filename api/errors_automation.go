package api

import (
	"errors"

	"github.com/taskweave/taskweave/domain/automation"
)

// automationErrors maps the automation sentinels to docs/api-conventions.md#errors;
// a *automation.ValidationError is automationInvalid's.
var automationErrors = []errorMapping{
	{automation.ErrNotFound, 404, "NOT_FOUND", "RULE_NOT_FOUND"},
	{automation.ErrCreatorIneligible, 409, "CONFLICT", "RULE_CREATOR_INELIGIBLE"},
	// Only the web request worker meets it: the rule, with its log, was deleted.
	{automation.ErrDeliveryGone, 404, "NOT_FOUND", "RULE_NOT_FOUND"},
}

// automationInvalid renders a rule's validation problems as one VALIDATION_ERROR naming
// each member path (actions[1].params.statusId).
func automationInvalid(err error) *Error {
	var ve *automation.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var f fields
	for _, p := range ve.Problems {
		f.add(p.Field, p.Code, p.Key, p.Args...)
	}
	return f.err().(*Error)
}
