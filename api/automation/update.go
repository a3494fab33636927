package automation

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/samber/lo"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/project"
)

// updateRule is PUT /{rid}: the members sent (those of the create body) replace the
// rule's, the others keep their values; `{name}` alone renames it, as it always did.
// The condition tree is replaced when any of rootGroupLogic, conditions and
// childGroups is sent.
func (s *handlers) updateRule(scope ruleScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sc, id, err := ruleTarget(c, scope, project.Admin)
		if err != nil {
			return err
		}
		var r ruleRequest
		if err := core.Decode(c, &r); err != nil {
			return err
		}
		ch := automation.RuleChange{Name: r.Name, TriggerType: r.TriggerType, TriggerPayload: r.TriggerPayload,
			Enabled: r.Enabled, ActionsSet: r.Actions != nil, Schedule: r.Schedule, Timezone: r.Timezone, Filter: r.Filter}
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
			return core.Required("name")
		case ch.NameOnly():
			rule, err = s.rules().Rename(c.UserContext(), sc, core.AuditActor(c), id, *r.Name)
		default:
			rule, err = s.rules().Update(c.UserContext(), sc, core.AuditActor(c), id, ch)
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
			return f, core.BadRequest("INVALID_ENUM", "field", "status", "values", strings.Join(automation.ExecutionStatuses, ", "))
		}
		f.Status = strings.Clone(v)
	}
	id, err := core.QueryID("issueId", c.Query("issueId"))
	if err != nil {
		return f, err
	}
	f.IssueID = id
	f.RunID, err = core.QueryID("runId", c.Query("runId"))
	return f, err
}

// runResponse is AutomationRun in api/openapi/90-automation.yaml.
type runResponse struct {
	ID         uuid.UUID `json:"id"`
	RuleID     uuid.UUID `json:"ruleId"`
	Slot       string    `json:"slot"`
	Status     string    `json:"status"`
	Matched    int       `json:"matched"`
	Truncated  bool      `json:"truncated"`
	Succeeded  int       `json:"succeeded"`
	Skipped    int       `json:"skipped"`
	Failed     int       `json:"failed"`
	Detail     *string   `json:"detail"`
	CreatedAt  string    `json:"createdAt"`
	FinishedAt *string   `json:"finishedAt"`
}

// listRuleRuns is GET /{rid}/runs: a scheduled rule's runs, latest slot first; a run's
// executions are GET /{rid}/executions?runId=.
func (s *handlers) listRuleRuns(scope ruleScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sc, id, err := ruleTarget(c, scope, project.Viewer)
		if err != nil {
			return err
		}
		pr, err := core.ParsePage(c, 20)
		if err != nil {
			return err
		}
		after, err := pr.AfterTimeID("rule-runs")
		if err != nil {
			return err
		}
		runs, total, err := s.rules().Runs(c.UserContext(), sc, id, after, pr.Offset(), pr.Limit())
		if err != nil {
			return err
		}
		next := pr.Next(c, "rule-runs", len(runs), total, func(i int) []string { return core.TimeIDKeys(runs[i].Slot, runs[i].ID) })
		runs = core.Trim(runs, pr)
		out := make([]runResponse, 0, len(runs))
		for _, r := range runs {
			out = append(out, runResponse{ID: r.ID, RuleID: r.RuleID, Slot: core.Instant(r.Slot), Status: r.Status, Matched: r.Matched,
				Truncated: r.Truncated, Succeeded: r.Succeeded, Skipped: r.Skipped, Failed: r.Failed, Detail: r.Detail,
				CreatedAt: core.Instant(r.CreatedAt), FinishedAt: core.InstantPtr(r.FinishedAt)})
		}
		return c.JSON(core.NewPage(out, pr, total, next))
	}
}

// ruleDeliveryResponse is AutomationWebhookDelivery in api/openapi/90-automation.yaml.
type ruleDeliveryResponse struct {
	ID             uuid.UUID  `json:"id"`
	RuleID         uuid.UUID  `json:"ruleId"`
	IssueID        *uuid.UUID `json:"issueId"`
	EventID        uuid.UUID  `json:"eventId"`
	URL            string     `json:"url"`
	Payload        string     `json:"payload"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	ResponseStatus *int       `json:"responseStatus"`
	ResponseBody   *string    `json:"responseBody"`
	LastError      *string    `json:"lastError"`
	NextRetryAt    *string    `json:"nextRetryAt"`
	CreatedAt      string     `json:"createdAt"`
	LastAttemptAt  *string    `json:"lastAttemptAt"`
	DeliveredAt    *string    `json:"deliveredAt"`
}

// listRuleDeliveries is GET /{rid}/deliveries: the rule's SEND_WEBHOOK requests, newest
// first (project ADMIN: they hold receivers' replies).
func (s *handlers) listRuleDeliveries(scope ruleScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sc, id, err := ruleTarget(c, scope, project.Admin)
		if err != nil {
			return err
		}
		pr, err := core.ParsePage(c, 20)
		if err != nil {
			return err
		}
		after, err := pr.AfterTimeID("rule-deliveries")
		if err != nil {
			return err
		}
		ds, total, err := s.rules().Deliveries(c.UserContext(), sc, id, after, pr.Offset(), pr.Limit())
		if err != nil {
			return err
		}
		next := pr.Next(c, "rule-deliveries", len(ds), total, func(i int) []string { return core.TimeIDKeys(ds[i].CreatedAt, ds[i].ID) })
		ds = core.Trim(ds, pr)
		out := make([]ruleDeliveryResponse, 0, len(ds))
		for _, d := range ds {
			out = append(out, ruleDeliveryResponse{ID: d.ID, RuleID: d.RuleID, IssueID: d.IssueID, EventID: d.EventID, URL: d.URL,
				Payload: d.Payload, Status: d.Status, Attempts: d.Attempts, ResponseStatus: d.ResponseStatus,
				ResponseBody: d.ResponseBody, LastError: d.LastError, NextRetryAt: core.InstantPtr(d.NextRetryAt),
				CreatedAt: core.Instant(d.CreatedAt), LastAttemptAt: core.InstantPtr(d.LastAttemptAt), DeliveredAt: core.InstantPtr(d.DeliveredAt)})
		}
		return c.JSON(core.NewPage(out, pr, total, next))
	}
}
