package automation

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/webhook"
)

// ruleRequest is the create body of both scopes (AutomationRuleCreateRequest in
// api/openapi/90-automation.yaml). A "scope" member is ignored: the path decides.
type ruleRequest struct {
	// Members only a reply carries (core.CheckMembers).
	_ struct{} `readonly:"scope,projectId,createdBy,rootGroup,disabledReason,disabledAt"`

	Name           *string            `json:"name"`
	TriggerType    *string            `json:"triggerType"`
	TriggerPayload json.RawMessage    `json:"triggerPayload"`
	RootGroupLogic *string            `json:"rootGroupLogic"`
	Conditions     []conditionRequest `json:"conditions"`
	ChildGroups    []groupRequest     `json:"childGroups"`
	Actions        []actionRequest    `json:"actions"`
	Enabled        *bool              `json:"enabled"`
	// Schedule, Timezone and Filter are a SCHEDULED rule's.
	Schedule *string         `json:"schedule"`
	Timezone *string         `json:"timezone"`
	Filter   json.RawMessage `json:"filter"`
}

type groupRequest struct {
	Logic       *string            `json:"logic"`
	Conditions  []conditionRequest `json:"conditions"`
	ChildGroups []groupRequest     `json:"childGroups"`
}

type conditionRequest struct {
	Type     *string                    `json:"type"`
	Operator *string                    `json:"operator"`
	Params   map[string]json.RawMessage `json:"params"`
}

type actionRequest struct {
	Position *int                       `json:"position"`
	Type     *string                    `json:"type"`
	Params   map[string]json.RawMessage `json:"params"`
}

// parseRule decodes a create body. Malformed JSON, a wrong JSON type and a missing name
// or triggerType are BAD_REQUEST; everything else about the rule is the domain's whole
// validation (one VALIDATION_ERROR naming every member path).
func parseRule(body core.Body) (automation.RuleInput, error) {
	var r ruleRequest
	if err := body.Decode(&r); err != nil {
		return automation.RuleInput{}, err
	}
	switch {
	case r.Name == nil:
		return automation.RuleInput{}, core.Required("name")
	case r.TriggerType == nil:
		return automation.RuleInput{}, core.Required("triggerType")
	}
	in := automation.RuleInput{Name: *r.Name, TriggerType: *r.TriggerType, TriggerPayload: r.TriggerPayload, Enabled: true,
		Root:     toGroupInput(groupRequest{Logic: r.RootGroupLogic, Conditions: r.Conditions, ChildGroups: r.ChildGroups}),
		Schedule: r.Schedule, Timezone: r.Timezone, Filter: r.Filter}
	if r.Enabled != nil {
		in.Enabled = *r.Enabled
	}
	for _, a := range r.Actions {
		in.Actions = append(in.Actions, automation.ActionInput{Position: a.Position, Type: ruleText(a.Type), Params: a.Params})
	}
	return in, nil
}

func toGroupInput(g groupRequest) automation.GroupInput {
	out := automation.GroupInput{Logic: ruleText(g.Logic)}
	for _, c := range g.Conditions {
		out.Conditions = append(out.Conditions, automation.ConditionInput{Type: ruleText(c.Type), Operator: ruleText(c.Operator), Params: c.Params})
	}
	for _, c := range g.ChildGroups {
		out.Groups = append(out.Groups, toGroupInput(c))
	}
	return out
}

func ruleText(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ruleResponse is AutomationRule in api/openapi/90-automation.yaml.
type ruleResponse struct {
	ID             uuid.UUID        `json:"id"`
	Name           string           `json:"name"`
	TriggerType    string           `json:"triggerType"`
	TriggerPayload *string          `json:"triggerPayload"`
	Scope          string           `json:"scope"`
	Enabled        bool             `json:"enabled"`
	ProjectID      *uuid.UUID       `json:"projectId"`
	CreatedBy      *uuid.UUID       `json:"createdBy"`
	CreatedAt      string           `json:"createdAt"`
	RootGroup      groupResponse    `json:"rootGroup"`
	Actions        []actionResponse `json:"actions"`
	// DisabledReason says why the rule was disabled because its creator may no
	// longer have it act (null otherwise); DisabledAt when.
	DisabledReason *string `json:"disabledReason"`
	DisabledAt     *string `json:"disabledAt"`
	// Schedule, Timezone and Filter are a SCHEDULED rule's (null otherwise); NextRunAt
	// is its next slot, computed in its zone, while it is enabled.
	Schedule  *string        `json:"schedule"`
	Timezone  *string        `json:"timezone"`
	Filter    map[string]any `json:"filter"`
	NextRunAt *string        `json:"nextRunAt"`
}

type groupResponse struct {
	ID          uuid.UUID           `json:"id"`
	Logic       string              `json:"logic"`
	Conditions  []conditionResponse `json:"conditions"`
	ChildGroups []groupResponse     `json:"childGroups"`
}

type conditionResponse struct {
	ID       uuid.UUID         `json:"id"`
	Type     string            `json:"type"`
	Operator string            `json:"operator"`
	Params   map[string]string `json:"params"`
}

type actionResponse struct {
	ID       uuid.UUID         `json:"id"`
	Position int               `json:"position"`
	Type     string            `json:"type"`
	Params   map[string]string `json:"params"`
}

func toRuleResponse(r *automation.Rule) ruleResponse {
	out := ruleResponse{ID: r.ID, Name: r.Name, TriggerType: r.TriggerType, TriggerPayload: r.TriggerPayload, Scope: r.Scope,
		Enabled: r.Enabled, ProjectID: r.ProjectID, CreatedBy: r.CreatedBy, CreatedAt: core.Instant(r.CreatedAt),
		RootGroup: toGroupResponse(r.Root), Actions: make([]actionResponse, 0, len(r.Actions)),
		DisabledReason: r.DisabledReason, DisabledAt: core.InstantPtr(r.DisabledAt), Schedule: r.Schedule, Timezone: r.Timezone,
		Filter: automation.FilterObject(r.Filter), NextRunAt: core.InstantPtr(r.NextRunAt)}
	for _, a := range r.Actions {
		out.Actions = append(out.Actions, actionResponse{ID: a.ID, Position: a.Position, Type: a.Type, Params: a.Params})
	}
	return out
}

func toGroupResponse(g automation.Group) groupResponse {
	out := groupResponse{ID: g.ID, Logic: g.Logic, Conditions: make([]conditionResponse, 0, len(g.Conditions)),
		ChildGroups: make([]groupResponse, 0, len(g.Groups))}
	for _, c := range g.Conditions {
		out.Conditions = append(out.Conditions, conditionResponse{ID: c.ID, Type: c.Type, Operator: c.Operator, Params: c.Params})
	}
	for _, c := range g.Groups {
		out.ChildGroups = append(out.ChildGroups, toGroupResponse(c))
	}
	return out
}

// executionResponse is AutomationExecution in api/openapi/90-automation.yaml.
type executionResponse struct {
	ID        uuid.UUID  `json:"id"`
	RuleID    uuid.UUID  `json:"ruleId"`
	RunID     *uuid.UUID `json:"runId"`
	IssueID   *uuid.UUID `json:"issueId"`
	EventType string     `json:"eventType"`
	Status    string     `json:"status"`
	Detail    *string    `json:"detail"`
	CreatedAt string     `json:"createdAt"`
}

func (s *handlers) rules() *automation.Service {
	return automation.NewService(s.DB.Bun, s.Audit).
		WithChecker(webhook.Checker{AllowPrivate: s.Webhook.AllowPrivate, Resolver: s.Webhook.Resolver})
}

// projectRuleScope is the project of the path as a rule scope.
func projectRuleScope(a *project.Access) automation.Scope {
	return automation.Scope{Project: &automation.Project{ID: a.Project.ID, WorkflowID: a.Project.WorkflowID}}
}

// systemRuleScope is the SYSTEM scope of /admin/automation/rules (the admin group
// has checked the caller's system role).
var systemRuleScope = automation.Scope{}

// ruleScope resolves the scope of a rule endpoint: the project in the path with at
// least min, or SYSTEM under /admin.
type ruleScope func(c *fiber.Ctx, min project.Role) (automation.Scope, error)

func (s *handlers) projectRules(c *fiber.Ctx, min project.Role) (automation.Scope, error) {
	a, err := s.ProjectAccess(c, min)
	if err != nil {
		return automation.Scope{}, err
	}
	return projectRuleScope(a), nil
}

func systemRules(*fiber.Ctx, project.Role) (automation.Scope, error) { return systemRuleScope, nil }

func (s *handlers) listRules(scope ruleScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sc, err := scope(c, project.Viewer)
		if err != nil {
			return err
		}
		pr, err := core.ParsePage(c, 20)
		if err != nil {
			return err
		}
		after, err := pr.AfterTimeID("rules")
		if err != nil {
			return err
		}
		rules, total, err := s.rules().List(c.UserContext(), sc, after, pr.Offset(), pr.Limit())
		if err != nil {
			return err
		}
		next := pr.Next(c, "rules", len(rules), total, func(i int) []string { return core.TimeIDKeys(rules[i].CreatedAt, rules[i].ID) })
		rules = core.Trim(rules, pr)
		out := make([]ruleResponse, 0, len(rules))
		for i := range rules {
			out = append(out, toRuleResponse(&rules[i]))
		}
		return c.JSON(core.NewPage(out, pr, total, next))
	}
}

func (s *handlers) createRule(scope ruleScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sc, err := scope(c, project.Admin)
		if err != nil {
			return err
		}
		in, err := parseRule(core.BodyOf(c))
		if err != nil {
			return err
		}
		r, err := s.rules().Create(c.UserContext(), sc, core.AuditActor(c), in)
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusCreated).JSON(toRuleResponse(r))
	}
}

// ruleTarget is the scope and the :rid of a rule endpoint.
func ruleTarget(c *fiber.Ctx, scope ruleScope, min project.Role) (automation.Scope, uuid.UUID, error) {
	sc, err := scope(c, min)
	if err != nil {
		return sc, uuid.Nil, err
	}
	id, err := core.PathUUID(c, "rid")
	return sc, id, err
}

func (s *handlers) getRule(scope ruleScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sc, id, err := ruleTarget(c, scope, project.Viewer)
		if err != nil {
			return err
		}
		r, err := s.rules().Get(c.UserContext(), sc, id)
		if err != nil {
			return err
		}
		return c.JSON(toRuleResponse(r))
	}
}

func (s *handlers) toggleRule(scope ruleScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sc, id, err := ruleTarget(c, scope, project.Admin)
		if err != nil {
			return err
		}
		r, err := s.rules().Toggle(c.UserContext(), sc, core.AuditActor(c), id)
		if err != nil {
			return err
		}
		return c.JSON(toRuleResponse(r))
	}
}

// takeOverRule is POST /{rid}/take-over: the caller becomes the rule's creator and the
// rule is enabled (the way back for a rule disabled because of its creator).
func (s *handlers) takeOverRule(scope ruleScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sc, id, err := ruleTarget(c, scope, project.Admin)
		if err != nil {
			return err
		}
		r, err := s.rules().TakeOver(c.UserContext(), sc, core.AuditActor(c), id)
		if err != nil {
			return err
		}
		return c.JSON(toRuleResponse(r))
	}
}

func (s *handlers) deleteRule(scope ruleScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sc, id, err := ruleTarget(c, scope, project.Admin)
		if err != nil {
			return err
		}
		if err := s.rules().Delete(c.UserContext(), sc, core.AuditActor(c), id); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

func (s *handlers) listRuleExecutions(scope ruleScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sc, id, err := ruleTarget(c, scope, project.Viewer)
		if err != nil {
			return err
		}
		pr, err := core.ParsePage(c, 20)
		if err != nil {
			return err
		}
		f, err := parseExecutionFilter(c)
		if err != nil {
			return err
		}
		after, err := pr.AfterTimeID("executions")
		if err != nil {
			return err
		}
		execs, total, err := s.rules().Executions(c.UserContext(), sc, id, f, after, pr.Offset(), pr.Limit())
		if err != nil {
			return err
		}
		next := pr.Next(c, "executions", len(execs), total, func(i int) []string { return core.TimeIDKeys(execs[i].CreatedAt, execs[i].ID) })
		execs = core.Trim(execs, pr)
		out := make([]executionResponse, 0, len(execs))
		for _, e := range execs {
			out = append(out, executionResponse{ID: e.ID, RuleID: e.RuleID, RunID: e.RunID, IssueID: e.IssueID, EventType: e.EventType,
				Status: e.Status, Detail: e.Detail, CreatedAt: core.Instant(e.CreatedAt)})
		}
		return c.JSON(core.NewPage(out, pr, total, next))
	}
}
