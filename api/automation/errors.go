package automation

import (
	"errors"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/automation"
)

// Errors maps the automation sentinels to docs/api-conventions.md#errors;
// a *automation.ValidationError is automationInvalid's.
var Errors = core.ErrorTable{Mappers: []core.Mapper{automationInvalid}, Mappings: []core.ErrorMapping{
	{Err: automation.ErrNotFound, Status: 404, Code: "NOT_FOUND", Reason: "RULE_NOT_FOUND"},
	{Err: automation.ErrCreatorIneligible, Status: 409, Code: "CONFLICT", Reason: "RULE_CREATOR_INELIGIBLE"},
	// Only the web request worker meets it: the rule, with its log, was deleted.
	{Err: automation.ErrDeliveryGone, Status: 404, Code: "NOT_FOUND", Reason: "RULE_NOT_FOUND"},
}}

// automationInvalid renders a rule's validation problems as one VALIDATION_ERROR naming
// each member path (actions[1].params.statusId).
func automationInvalid(err error) *core.Error {
	var ve *automation.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var f core.Fields
	for _, p := range ve.Problems {
		f.Add(p.Field, p.Code, p.Key, p.Args...)
	}
	return f.Err().(*core.Error)
}
