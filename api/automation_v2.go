package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/samber/lo"

	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/project"
)

// updateRule is PUT /{rid}: the members sent (those of the create body) replace the
// rule's, the others keep their values; `{name}` alone renames it, as it always did.
// The condition tree is replaced when any of rootGroupLogic, conditions and
// childGroups is sent.
func (s *Server) updateRule(scope ruleScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sc, id, err := ruleTarget(c, scope, project.Admin)
		if err != nil {
			return err
		}
		var r ruleRequest
		if err := decodeJSON(c.Body(), &r); err != nil {
			return err
		}
		ch := automation.RuleChange{Name: r.Name, TriggerType: r.TriggerType, TriggerPayload: r.TriggerPayload,
			Enabled: r.Enabled, ActionsSet: r.Actions != nil}
		if r.RootGroupLogic != nil || r.Conditions != nil || r.ChildGroups != nil {
			root := toGroupInput(groupRequest{Logic: r.RootGroupLogic, Conditions: r.Conditions, ChildGroups: r.ChildGroups})
			ch.Root = &root
		}
		for _, a := range r.Actions {
			ch.Actions = append(ch.Actions, automation.ActionInput{Position: a.Position, Type: ruleText(a.Type), Params: a.Params})
		}
		var rule *automation.Rule
		switch {
		case ch.Empty():
			return required("name")
		case ch.NameOnly():
			rule, err = s.rules().Rename(c.UserContext(), sc, auditActor(c), id, *r.Name)
		default:
			rule, err = s.rules().Update(c.UserContext(), sc, auditActor(c), id, ch)
		}
		if err != nil {
			return err
		}
		return c.JSON(toRuleResponse(rule))
	}
}

// parseExecutionFilter reads the executions list's `status` and `issueId` parameters.
func parseExecutionFilter(c *fiber.Ctx) (automation.ExecutionFilter, error) {
	var f automation.ExecutionFilter
	if v := c.Query("status"); v != "" {
		if !lo.Contains(automation.ExecutionStatuses, v) {
			return f, badRequest("INVALID_ENUM", "field", "status", "values", strings.Join(automation.ExecutionStatuses, ", "))
		}
		f.Status = strings.Clone(v)
	}
	id, err := queryID("issueId", c.Query("issueId"))
	f.IssueID = id
	return f, err
}
